package protocol

import "time"

// timestampLayout is ProtoJSON's Timestamp form at millisecond precision,
// as 1.0 asks for; 0.3 accepts it too (ISO 8601).
const timestampLayout = "2006-01-02T15:04:05.000Z"

// appendTimestamp appends t in UTC as a quoted timestamp.
func appendTimestamp(dst []byte, t time.Time) []byte {
	dst = append(dst, '"')
	dst = t.UTC().AppendFormat(dst, timestampLayout)
	return append(dst, '"')
}

// parseTimestamp reads a timestamp leniently: RFC 3339 with any offset or
// fraction, or (as some 0.3 SDKs wrote) no zone at all, taken as UTC.
func parseTimestamp(s string) (time.Time, bool) {
	for _, layout := range [...]string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02 15:04:05.999999999Z07:00"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), true
		}
	}
	return time.Time{}, false
}
