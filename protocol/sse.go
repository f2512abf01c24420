package protocol

// SSEHeartbeat is the keep-alive comment written on idle streams; clients
// ignore comment lines, proxies see traffic.
const SSEHeartbeat = ": ping\n\n"

// AppendSSEEvent appends one event: `id: <id>\n` (omitted when id is "")
// and `data: <data>\n`, then the blank line that dispatches it.
//
// The encoders never put a raw line break in JSON, so data is normally a
// single line. Should it hold one anyway, each line goes in its own data:
// field, which a client joins back with "\n": a line break is JSON
// whitespace, so the value is unchanged and no line can be taken for a
// field of its own. Line breaks in id are dropped for the same reason.
func AppendSSEEvent(dst []byte, id string, data []byte) []byte {
	if id != "" {
		dst = append(dst, "id: "...)
		for i := 0; i < len(id); i++ {
			if c := id[i]; c != '\n' && c != '\r' && c != 0 {
				dst = append(dst, c)
			}
		}
		dst = append(dst, '\n')
	}
	dst = append(dst, "data: "...)
	for i := 0; i < len(data); i++ {
		c := data[i]
		if c != '\n' && c != '\r' {
			continue
		}
		dst = append(dst, data[:i]...)
		dst = append(dst, "\ndata: "...)
		if c == '\r' && i+1 < len(data) && data[i+1] == '\n' {
			i++
		}
		data = data[i+1:]
		i = -1
	}
	dst = append(dst, data...)
	return append(dst, '\n', '\n')
}
