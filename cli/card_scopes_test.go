package cli

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// securedCard is a 1.0 card with the security members as this module
// renders them: strict ProtoJSON requirements, {} for no scopes and
// {"list":[…]} for some, on the card and on a skill. %s is spliced in
// after the schemes.
const securedCard = `{"name":"Gated","description":"d","version":"1",` +
	`"supportedInterfaces":[{"url":"https://h/a2a","protocolBinding":"JSONRPC","protocolVersion":"1.0"}],` +
	`"capabilities":{"streaming":true},"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],` +
	`"securitySchemes":{"users":{"httpAuthSecurityScheme":{"scheme":"Basic"}},` +
	`"corp":{"oauth2SecurityScheme":{"flows":{"clientCredentials":{"tokenUrl":"https://id.example.com/token","scopes":{"a2a:call":"Call","a2a:admin":"Admin"}}}}}},` +
	`%s,` +
	`"skills":[{"id":"s","name":"S","description":"d","tags":["t"]},` +
	`{"id":"admin","name":"Admin","description":"d","tags":["ops"],"securityRequirements":[{"schemes":{"corp":{"list":["a2a:admin"]}}}]}]}`

func secured(requirements string) []byte {
	return []byte(strings.Replace(securedCard, "%s", requirements, 1))
}

// TestReadSecuredCard: a2a-go reads the requirements of a card in
// strict ProtoJSON (a2a-go#430 refuses them as they are), with their
// scopes, and the card check finds nothing wrong with it.
func TestReadSecuredCard(t *testing.T) {
	raw := secured(`"securityRequirements":[{"schemes":{"users":{}}},{"schemes":{"corp":{"list":["a2a:call"]},"users":{}}}]`)
	card, err := readCard(raw)
	if err != nil {
		t.Fatalf("readCard: %v", err)
	}
	want := a2a.SecurityRequirementsOptions{{"users": {}}, {"corp": {"a2a:call"}, "users": {}}}
	if !reflect.DeepEqual(card.SecurityRequirements, want) {
		t.Errorf("requirements %#v, want %#v", card.SecurityRequirements, want)
	}
	if got := card.Skills[1].SecurityRequirements; !reflect.DeepEqual(got, a2a.SecurityRequirementsOptions{{"corp": {"a2a:admin"}}}) {
		t.Errorf("the skill's requirements: %#v", got)
	}
	if len(card.SecuritySchemes) != 2 || len(card.SupportedInterfaces) != 1 {
		t.Errorf("schemes %v, interfaces %v", card.SecuritySchemes, card.SupportedInterfaces)
	}
	if p := CheckCard(raw); p != nil {
		t.Errorf("problems: %q", p)
	}
	// a2a-go's own bare arrays are read as before.
	card, err = readCard(secured(`"securityRequirements":[{"schemes":{"corp":["a2a:call"]}}]`))
	if err != nil || !reflect.DeepEqual(card.SecurityRequirements, a2a.SecurityRequirementsOptions{{"corp": {"a2a:call"}}}) {
		t.Errorf("bare arrays: %#v, %v", card, err)
	}
}

// TestSecuredCardProblems: what is wrong with a card's requirements is
// still reported: a shape neither form has (a2a-go refuses it); and the
// field rules still read the document as sent.
func TestSecuredCardProblems(t *testing.T) {
	for _, c := range []struct {
		name, requirements, want string
	}{
		{"scopes as a string", `"securityRequirements":[{"schemes":{"corp":{"list":"a2a:call"}}}]`,
			"json: cannot unmarshal object into Go struct field agentCardCompat.securityRequirements.schemes of type a2a.SecuritySchemeScopes"},
		{"scopes as a number", `"securityRequirements":[{"schemes":{"corp":7}}]`,
			"json: cannot unmarshal number into Go struct field agentCardCompat.securityRequirements.schemes of type a2a.SecuritySchemeScopes"},
		{"schemes not an object", `"securityRequirements":[{"schemes":["users"]}]`,
			"json: cannot unmarshal array into Go struct field agentCardCompat.securityRequirements.schemes of type map[a2a.SecuritySchemeName]a2a.SecuritySchemeScopes"},
	} {
		want := []string{"the card cannot be read by a2a-go: " + c.want}
		if got := CheckCard(secured(c.requirements)); !slices.Equal(got, want) {
			t.Errorf("%s: problems\n%q\nwant\n%q", c.name, got, want)
		}
	}
	raw := strings.Replace(string(secured(`"securityRequirements":[{"schemes":{"users":{}}}]`)), `"tags":["t"]`, `"tags":[]`, 1)
	if got := CheckCard([]byte(raw)); !slices.Equal(got, []string{"skills[0].tags: at least one tag is required"}) {
		t.Errorf("a skill without tags: problems %q", got)
	}
}

// TestBareScopesKeepsOtherCards: a card with nothing to rewrite is
// handed to a2a-go as sent.
func TestBareScopesKeepsOtherCards(t *testing.T) {
	for _, raw := range []string{
		`{"name":"n","skills":[]}`,
		`{"securityRequirements":[{"schemes":{"corp":["a"]}}],"skills":[{"id":"s"}]}`,
		`{"securityRequirements":"nonsense"}`,
		`not json "securityRequirements"`,
	} {
		if got := bareScopes([]byte(raw)); string(got) != raw {
			t.Errorf("bareScopes(%s) = %s", raw, got)
		}
	}
}
