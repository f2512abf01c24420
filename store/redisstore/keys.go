package redisstore

import (
	"fmt"
	"math"
	"time"
)

// Every key of a prefix is under the hash tag {prefix}: one Redis Cluster
// slot holds all of them, so that the write script, which moves a task in
// its owner's index and takes its lease as it writes the task, is one
// atomic step on a Cluster as on one server. The price is that one
// prefix lives on one shard: mounts that need more spread over several
// prefixes.
func tag(prefix string) string { return "{" + prefix + "}" }

// scopeBase is what the keys and channels of a sharing scope start with,
// where the scripts and tag take a prefix: the prefix alone without a
// share (the keys of stores made before shares), else <prefix>{<share>}.
// Its keys, {<prefix>{<share>}}t:<id>:h and so on, hash on
// <prefix>{<share>, which holds a brace that no prefix does (New refuses
// one): no share's keys or channels are another prefix's or share's, and
// each share has one Cluster slot of its own.
func scopeBase(prefix, share string) string {
	if share == "" {
		return prefix
	}
	return prefix + "{" + share + "}"
}

// taskKeys are the keys of task id: its hash (the record and its
// events, luaWrite), push configs and delivery claims.
func taskKeys(prefix, id string) [3]string {
	t := tag(prefix) + "t:" + id
	return [3]string{t + ":h", t + ":p", t + ":c"}
}

// ownerKeys are owner's index and deadline set (see luaCommon).
func ownerKeys(prefix, owner string) [2]string {
	o := tag(prefix) + "o:" + owner
	return [2]string{o + ":ix", o + ":dl"}
}

// tsHex is a status timestamp as the index orders it: unix nanoseconds
// (the zero time first, as the memory store sorts it) biased to unsigned
// and written as 16 hex digits, so that byte order is time order.
func tsHex(t time.Time) string {
	n := int64(math.MinInt64)
	if !t.IsZero() {
		n = t.UnixNano()
	}
	return fmt.Sprintf("%016x", uint64(n)^(1<<63))
}
