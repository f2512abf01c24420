package main

import "strconv"

// The canned answers, written by hand: the benchmark measures the proxy
// in front of this agent, so the agent's own work per answer is kept to
// appending bytes.

// appendString appends s as a JSON string.
func appendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		default:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		}
		start = i + 1
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// appendHead appends the JSON-RPC envelope up to the result's value.
func appendHead(b, id []byte) []byte {
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, id...)
	return append(b, `,"result":`...)
}

// appendIDs appends the members that name the task: "taskId" (or "id" in
// a Task) and "contextId", each followed by a comma.
func appendIDs(b []byte, taskKey string, t *turn) []byte {
	b = append(b, '"')
	b = append(b, taskKey...)
	b = append(b, `":`...)
	b = appendString(b, t.taskID)
	b = append(b, `,"contextId":`...)
	b = appendString(b, t.contextID)
	return append(b, ',')
}

// appendTask appends {"task":{…}} in state, with the texts (if any) as the
// parts of its one artifact.
func appendTask(b []byte, t *turn, state string, texts []string) []byte {
	b = append(b, `{"task":{`...)
	b = appendIDs(b, "id", t)
	b = append(b, `"status":{"state":"`...)
	b = append(b, state...)
	b = append(b, `"}`...)
	if len(texts) > 0 {
		b = append(b, `,"artifacts":[{"artifactId":`...)
		b = appendString(b, t.artifactID)
		b = append(b, `,"name":"ok","parts":[`...)
		for i, s := range texts {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"text":`...)
			b = appendString(b, s)
			b = append(b, '}')
		}
		b = append(b, `]}]`...)
	}
	return append(b, `}}`...)
}

// appendArtifactUpdate appends {"artifactUpdate":{…}}: one text part of
// the turn's artifact.
func appendArtifactUpdate(b []byte, t *turn, text string, appendTo, last bool) []byte {
	b = append(b, `{"artifactUpdate":{`...)
	b = appendIDs(b, "taskId", t)
	b = append(b, `"artifact":{"artifactId":`...)
	b = appendString(b, t.artifactID)
	b = append(b, `,"name":"ok","parts":[{"text":`...)
	b = appendString(b, text)
	b = append(b, `}]},"append":`...)
	b = strconv.AppendBool(b, appendTo)
	b = append(b, `,"lastChunk":`...)
	b = strconv.AppendBool(b, last)
	return append(b, `}}`...)
}

// appendStatusUpdate appends {"statusUpdate":{…}} in state.
func appendStatusUpdate(b []byte, t *turn, state string) []byte {
	b = append(b, `{"statusUpdate":{`...)
	b = appendIDs(b, "taskId", t)
	b = append(b, `"status":{"state":"`...)
	b = append(b, state...)
	return append(b, `"}}}`...)
}

// appendError appends a JSON-RPC error answer.
func appendError(b, id []byte, code int, msg string) []byte {
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, id...)
	b = append(b, `,"error":{"code":`...)
	b = strconv.AppendInt(b, int64(code), 10)
	b = append(b, `,"message":`...)
	b = appendString(b, msg)
	return append(b, `}}`...)
}
