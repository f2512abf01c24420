// Package protocoltest holds cases that every reader of A2A wire values is
// tested against, so that protocol's codecs (what a caller sends) and
// upstream's event parser (what an agent sends) are held to one outcome
// for one input. It is imported by tests only.
package protocoltest

// A Base64Case is one base64 text of a bytes value and its outcome.
type Base64Case struct {
	// Name says what the case is about.
	Name string
	// In is the text as it stands once the JSON string holding it is
	// unquoted.
	In string
	// OK reports whether In is accepted; Want is then what it decodes to.
	OK   bool
	Want []byte
}

// Base64 is the table protocol.DecodeBase64 is held to, directly and
// through each of its callers: a caller's file part (0.3 file.bytes, 1.0
// raw) and an agent's file event. Its doc comment gives the reasons.
var Base64 = []Base64Case{
	{Name: "padded", In: "QQ==", OK: true, Want: []byte("A")},
	{Name: "unpadded", In: "QQ", OK: true, Want: []byte("A")},
	{Name: "partial padding", In: "QQ="},
	{Name: "padding beyond a quantum", In: "QQ==="},
	{Name: "one padding character", In: "QUI=", OK: true, Want: []byte("AB")},
	{Name: "one padding character left out", In: "QUI", OK: true, Want: []byte("AB")},
	{Name: "no padding needed", In: "QUJD", OK: true, Want: []byte("ABC")},
	{Name: "empty", In: "", OK: true, Want: []byte{}},
	{Name: "standard alphabet", In: "+//+YQ==", OK: true, Want: []byte{0xfb, 0xff, 0xfe, 'a'}},
	{Name: "standard alphabet unpadded", In: "+//+YQ", OK: true, Want: []byte{0xfb, 0xff, 0xfe, 'a'}},
	{Name: "standard alphabet partial padding", In: "+//+YQ="},
	{Name: "URL-safe alphabet", In: "-__-YQ==", OK: true, Want: []byte{0xfb, 0xff, 0xfe, 'a'}},
	{Name: "URL-safe alphabet unpadded", In: "-__-YQ", OK: true, Want: []byte{0xfb, 0xff, 0xfe, 'a'}},
	{Name: "URL-safe alphabet, two bytes", In: "-_8=", OK: true, Want: []byte{0xfb, 0xff}},
	{Name: "URL-safe alphabet, two bytes unpadded", In: "-_8", OK: true, Want: []byte{0xfb, 0xff}},
	{Name: "URL-safe alphabet partial padding", In: "-__-YQ="},
	{Name: "mixed alphabets", In: "+_"},
	{Name: "mixed alphabets in one quantum", In: "a+b-"},
	{Name: "a lone character", In: "Q"},
	{Name: "a lone character padded", In: "Q==="},
	{Name: "data after padding", In: "QQ=x"},
	{Name: "padding in the middle", In: "QQ==QQ=="},
	{Name: "only padding", In: "===="},
	{Name: "space", In: "Q Q=="},
	{Name: "trailing space", In: "QQ== "},
	{Name: "tab", In: "QQ\t=="},
	{Name: "line feed inside", In: "QQ\n=="},
	{Name: "line feed at the end", In: "QQ==\n"},
	{Name: "line feed in an unpadded text", In: "Q\nQ"},
	{Name: "line break between quanta", In: "QUJD\r\nQUJD"},
	{Name: "line break before padding", In: "QUJD\r\nQQ=="},
	{Name: "carriage return", In: "QUJD\rQUJD"},
	{Name: "not the alphabet", In: "%%"},
	{Name: "not the alphabet padded", In: "@@=="},
	{Name: "unused bits set", In: "QR==", OK: true, Want: []byte("A")},
}
