package caddya2a

// The parser's subdirective lists, for the external tests.
var (
	A2AKeysForTest          = a2aKeys
	SkillKeysForTest        = skillKeys
	ExtensionKeysForTest    = extensionKeys
	CORSKeysForTest         = corsKeys
	StoreKeysForTest        = storeKeys
	FileStoreKeysForTest    = fileStoreKeys
	PostgresKeysForTest     = postgresStoreKeys
	UpstreamKeysForTest     = upstreamKeys
	ExtendedCardKeysForTest = extendedCardKeys
	SignCardKeysForTest     = signCardKeys
)

// PooledBackends counts the backends the pool holds whose key names the
// store module type id (a2a.stores.<name>).
func PooledBackends(id string) int {
	n := 0
	backends.Range(func(key, _ any) bool {
		if k, _ := key.(string); len(k) > len(id) && k[:len(id)+1] == id+"|" {
			n++
		}
		return true
	})
	return n
}
