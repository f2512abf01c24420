package redisstore

import (
	"fmt"
	"math"
	"time"
)

// taskKeys are the keys of task id: its hash, event stream, push configs
// and delivery claims, all under the hash tag {prefix+id} so that they
// share one Cluster slot and one script can write them together.
func taskKeys(prefix, id string) [4]string {
	tag := "{" + prefix + id + "}"
	return [4]string{tag + ":h", tag + ":e", tag + ":p", tag + ":c"}
}

// ownerKeys are owner's index and deadline set (see luaCommon).
func ownerKeys(prefix, owner string) [2]string {
	tag := "{" + prefix + "o:" + owner + "}"
	return [2]string{tag + ":ix", tag + ":dl"}
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
