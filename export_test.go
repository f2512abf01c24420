package caddya2a

// The parser's subdirective lists, for the external tests.
var (
	A2AKeysForTest          = a2aKeys
	SkillKeysForTest        = skillKeys
	ExtensionKeysForTest    = extensionKeys
	CORSKeysForTest         = corsKeys
	StoreKeysForTest        = storeKeys
	UpstreamKeysForTest     = upstreamKeys
	ExtendedCardKeysForTest = extendedCardKeys
	SignCardKeysForTest     = signCardKeys
)
