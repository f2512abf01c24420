package grpcbind

import (
	"os"
	"path/filepath"
	"testing"

	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"google.golang.org/protobuf/encoding/protojson"
)

// The 1.0 card documents the module renders are ProtoJSON of the proto's
// AgentCard, strictly: GetExtendedAgentCard answers by unmarshalling
// them, and a protojson client reads them so. The security goldens hold
// every scheme kind and requirement form.
func TestCardGoldensAreProtoJSON(t *testing.T) {
	files, err := filepath.Glob("../../protocol/testdata/golden/card/card*_v10.json")
	if err != nil || len(files) < 2 {
		t.Fatalf("goldens %v %v", files, err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var card a2apb.AgentCard
		if err := protojson.Unmarshal(b, &card); err != nil {
			t.Errorf("%s: %v", filepath.Base(f), err)
		}
	}
	b, err := os.ReadFile("../../protocol/testdata/golden/card/card_security_v10.json")
	if err != nil {
		t.Fatal(err)
	}
	var card a2apb.AgentCard
	if err := protojson.Unmarshal(b, &card); err != nil {
		t.Fatal(err)
	}
	reqs := card.GetSecurityRequirements()
	if len(reqs) != 3 || len(reqs[0].GetSchemes()["basic"].GetList()) != 0 ||
		len(reqs[1].GetSchemes()["oauth"].GetList()) != 2 || len(reqs[2].GetSchemes()) != 2 {
		t.Fatalf("requirements %v", reqs)
	}
	s := card.GetSecuritySchemes()
	if s["basic"].GetHttpAuthSecurityScheme().GetScheme() != "Basic" ||
		s["apikey"].GetApiKeySecurityScheme().GetLocation() != "header" ||
		!s["oauth"].GetOauth2SecurityScheme().GetFlows().GetAuthorizationCode().GetPkceRequired() ||
		s["device"].GetOauth2SecurityScheme().GetFlows().GetDeviceCode().GetDeviceAuthorizationUrl() == "" ||
		s["m2m"].GetOauth2SecurityScheme().GetFlows().GetClientCredentials().GetScopes()["tasks:write"] != "Send messages" ||
		s["mtls"].GetMtlsSecurityScheme() == nil ||
		s["oidc"].GetOpenIdConnectSecurityScheme().GetOpenIdConnectUrl() == "" {
		t.Fatalf("schemes %v", s)
	}
}
