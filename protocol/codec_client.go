package protocol

import "encoding/json"

// The client half of dialectCodec: the module calling an A2A agent.

func (c dialectCodec) MethodName(m Method) string {
	for name, op := range c.d.methods {
		if op == m {
			return name
		}
	}
	return ""
}

func (c dialectCodec) AppendSendParams(dst []byte, p *SendParams) []byte {
	return appendSendParams(c.d, dst, p)
}

func (c dialectCodec) AppendGetTaskParams(dst []byte, p *GetTaskParams) []byte {
	return appendGetTaskParams(c.d, dst, p)
}

func (c dialectCodec) AppendTaskIDParams(dst []byte, p *TaskIDParams) []byte {
	return appendTaskIDParams(c.d, dst, p)
}

func (c dialectCodec) DecodeTask(result json.RawMessage) (*Task, error) {
	r, e := checkResult(result)
	if e != nil {
		return nil, asError(agentError(e))
	}
	t, e := decodeTask(c.d, r, resultField)
	return t, asError(agentError(e))
}

func (c dialectCodec) DecodeSendResult(result json.RawMessage) (*Event, error) {
	ev, e := decodeEvent(c.d, result, false)
	return ev, asError(agentError(e))
}

func (c dialectCodec) DecodeStreamResult(result json.RawMessage) (*Event, error) {
	ev, e := decodeEvent(c.d, result, true)
	return ev, asError(agentError(e))
}
