package protocol

import (
	"encoding/json"
	"time"
)

// Shared test fixtures: representative values of every model type, using
// every part kind and optional member, with text that needs escaping.

var fixtureTime = time.Date(2026, 3, 12, 10, 30, 0, 123456789, time.UTC)

func fixtureParts() []Part {
	return []Part{
		{Kind: PartText, Text: "He said \"hi\" <b>&</b>\n\ttab é 日本 \u2028", MediaType: "text/plain", Metadata: json.RawMessage(`{"lang":"en"}`)},
		{Kind: PartFile, Raw: []byte("hello\x00\xff"), Filename: "hello.bin", MediaType: "application/octet-stream"},
		{Kind: PartFile, URL: "https://files.example.com/a.png?x=1&y=2", Filename: "a.png", MediaType: "image/png"},
		{Kind: PartData, Data: json.RawMessage(`{"answer":42,"list":[1,"two",null],"nested":{"ok":true}}`), MediaType: "application/json"},
		{Kind: PartData, Data: json.RawMessage(`[1,2,3]`)},
	}
}

func fixtureUserMessage() Message {
	return Message{
		ID: "msg-user-1", ContextID: "ctx-1", TaskID: "task-1", Role: RoleUser,
		Parts:            []Part{{Kind: PartText, Text: "What is the answer?"}, {Kind: PartData, Data: json.RawMessage(`{"q":1}`)}},
		Metadata:         json.RawMessage(`{"client":"test"}`),
		Extensions:       []string{"https://ext.example.com/v1"},
		ReferenceTaskIDs: []string{"task-0"},
	}
}

func fixtureAgentMessage() Message {
	return Message{ID: "msg-agent-1", ContextID: "ctx-1", TaskID: "task-1", Role: RoleAgent,
		Parts: []Part{{Kind: PartText, Text: "The answer is 42."}}}
}

func fixtureTask() Task {
	return Task{
		ID: "task-1", ContextID: "ctx-1",
		Status: TaskStatus{State: StateCompleted, Timestamp: fixtureTime, Message: &Message{
			ID: "msg-status-1", ContextID: "ctx-1", TaskID: "task-1", Role: RoleAgent,
			Parts: []Part{{Kind: PartText, Text: "Done."}}}},
		Artifacts: []Artifact{
			{ID: "art-1", Name: "result", Description: "the full answer", Parts: fixtureParts(),
				Metadata: json.RawMessage(`{"k":"v"}`), Extensions: []string{"https://ext.example.com/v1"}},
			{ID: "art-2", Parts: []Part{{Kind: PartText, Text: "second"}}},
		},
		History:  []Message{fixtureUserMessage(), fixtureAgentMessage()},
		Metadata: json.RawMessage(`{"trace":"abc","n":1}`),
	}
}

func fixtureStatusWorking() StatusUpdate {
	return StatusUpdate{TaskID: "task-1", ContextID: "ctx-1", Status: TaskStatus{State: StateWorking, Timestamp: fixtureTime,
		Message: &Message{ID: "msg-progress", ContextID: "ctx-1", TaskID: "task-1", Role: RoleAgent, Parts: []Part{{Kind: PartText, Text: "thinking…"}}}}}
}

func fixtureStatusFinal() StatusUpdate {
	return StatusUpdate{TaskID: "task-1", ContextID: "ctx-1", Status: TaskStatus{State: StateCompleted, Timestamp: fixtureTime},
		Final: true, Metadata: json.RawMessage(`{"elapsedMs":12}`)}
}

func fixtureArtifactFirst() ArtifactUpdate {
	return ArtifactUpdate{TaskID: "task-1", ContextID: "ctx-1",
		Artifact: Artifact{ID: "art-1", Name: "response", Parts: []Part{{Kind: PartText, Text: "The ans"}}}}
}

func fixtureArtifactLast() ArtifactUpdate {
	return ArtifactUpdate{TaskID: "task-1", ContextID: "ctx-1",
		Artifact: Artifact{ID: "art-1", Parts: []Part{{Kind: PartText, Text: "wer is 42."}}},
		Append:   true, LastChunk: true, Metadata: json.RawMessage(`{"chunk":2}`)}
}

func fixtureCard() AgentCard {
	return AgentCard{
		Name:             "Echo Agent",
		Description:      "Repeats what you say <politely> & quickly.",
		Version:          "1.2.3",
		Provider:         &Provider{Organization: "Example Org", URL: "https://example.com"},
		DocumentationURL: "https://example.com/docs",
		IconURL:          "https://example.com/icon.png",
		Interfaces: []Interface{
			{URL: "https://agent.example.com/a2a", Binding: "JSONRPC", Version: V10},
			{URL: "https://agent.example.com/a2a", Binding: "JSONRPC", Version: V03},
			{URL: "https://agent.example.com/a2a/rest", Binding: "HTTP+JSON", Version: V03},
		},
		Streaming:         true,
		PushNotifications: false,
		ExtendedCard:      true,
		Extensions: []Extension{
			{URI: "https://ext.example.com/v1", Description: "An extension", Required: true, Params: json.RawMessage(`{"mode": "fast"}`)},
			{URI: "urn:ext:plain"},
		},
		DefaultInputModes:  []string{"text/plain", "application/json"},
		DefaultOutputModes: []string{"text/plain"},
		Skills: []Skill{
			{ID: "echo", Name: "Echo", Description: "Echoes the input", Tags: []string{"echo", "test"},
				Examples: []string{"say hi"}, InputModes: []string{"text/plain"}, OutputModes: []string{"text/plain"}},
			{ID: "upper", Name: "Upper", Description: "Shouts", Tags: []string{"text"}},
		},
	}
}

// fixtureErrors lists every error constructor with representative args.
func fixtureErrors() []struct {
	name string
	err  *Error
} {
	return []struct {
		name string
		err  *Error
	}{
		{"parse", errParse()},
		{"invalid_request", errInvalidRequest("")},
		{"method_not_found", ErrMethodNotFound("tasks/list")},
		{"invalid_params", ErrInvalidParams("Invalid parameters: message.parts: must contain at least one part",
			FieldViolation{Field: "message.parts", Description: "must contain at least one part"},
			FieldViolation{Field: "message.role", Description: "is required"})},
		{"internal", ErrInternal("err-123")},
		{"task_not_found", ErrTaskNotFound("task-1")},
		{"task_not_cancelable", ErrTaskNotCancelable("task-1")},
		{"push_not_supported", ErrPushNotSupported()},
		{"unsupported_operation", ErrUnsupportedOperation("Task is in a terminal state")},
		{"content_type_not_supported", ErrContentTypeNotSupported("")},
		{"invalid_agent_response", ErrInvalidAgentResponse()},
		{"extended_card_not_configured", ErrExtendedCardNotConfigured()},
		{"extension_support_required", ErrExtensionSupportRequired("https://ext.example.com/v1")},
		{"version_not_supported", ErrVersionNotSupported("99.0", "")},
	}
}

// fixtureSecuredCard is fixtureCard with one security scheme of every
// kind and flow, and requirements with scopes, without, and together.
func fixtureSecuredCard() AgentCard {
	c := fixtureCard()
	c.SecuritySchemes = []SecurityScheme{
		{Name: "apikey", Kind: SchemeAPIKey, Location: "header", ParamName: "X-API-Key", Description: "A key from the portal"},
		{Name: "basic", Kind: SchemeHTTP, HTTPScheme: "Basic"},
		{Name: "bearer", Kind: SchemeHTTP, HTTPScheme: "Bearer", BearerFormat: "JWT"},
		{Name: "device", Kind: SchemeOAuth2, Flow: &OAuthFlow{Kind: FlowDeviceCode,
			DeviceAuthorizationURL: "https://auth.example.com/device", TokenURL: "https://auth.example.com/token"}},
		{Name: "m2m", Kind: SchemeOAuth2, Flow: &OAuthFlow{Kind: FlowClientCredentials, TokenURL: "https://auth.example.com/token",
			Scopes: []Scope{{Name: "tasks:write", Description: "Send messages"}}}},
		{Name: "mtls", Kind: SchemeMutualTLS},
		{Name: "oauth", Kind: SchemeOAuth2, OAuth2MetadataURL: "https://auth.example.com/.well-known/oauth-authorization-server",
			Flow: &OAuthFlow{Kind: FlowAuthorizationCode, AuthorizationURL: "https://auth.example.com/authorize",
				TokenURL: "https://auth.example.com/token", RefreshURL: "https://auth.example.com/refresh", PKCERequired: true,
				Scopes: []Scope{{Name: "read", Description: "Read tasks"}, {Name: "write", Description: "Send \"messages\""}}}},
		{Name: "oidc", Kind: SchemeOpenIDConnect, OpenIDConnectURL: "https://auth.example.com/.well-known/openid-configuration"},
	}
	c.Security = []SecurityRequirement{
		{{Scheme: "basic"}},
		{{Scheme: "oauth", Scopes: []string{"read", "write"}}},
		{{Scheme: "apikey"}, {Scheme: "mtls"}},
	}
	return c
}
