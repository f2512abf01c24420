package caddya2a

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
)

// FuzzUnmarshalCaddyfile feeds arbitrary text as the body of an a2a block.
// No input may panic the parser; whatever it accepts must survive the trip
// through its JSON config (what Caddy actually runs) unchanged, and the
// checks of provisioning (checkOffline: the handler's, the card's, its
// upstream's and its store's) must judge it without panicking. Seeds in
// testdata/fuzz/FuzzUnmarshalCaddyfile are the a2a blocks of the adapt
// goldens.
func FuzzUnmarshalCaddyfile(f *testing.F) {
	f.Add("upstream http://127.0.0.1:9000\nname N\ndescription D\nskill s {\n\tname S\n\tdescription S\n\ttags t\n}")
	f.Add("upstream http://127.0.0.1:9000\nlimits {\n\tmax_parts 3\n\tmax_text_size 1KiB\n}\nextension urn:x {\n\trequired\n\tparams `{\"a\":1}`\n}")
	f.Fuzz(func(t *testing.T, body string) {
		d, ok := dispenser(body)
		if !ok {
			return // not even Caddyfile tokens: the lexer's business
		}
		var h Handler
		if err := h.UnmarshalCaddyfile(d); err != nil {
			if err.Error() == "" {
				t.Fatal("empty error")
			}
			return
		}
		raw, err := json.Marshal(&h)
		if err != nil {
			t.Fatalf("accepted config does not marshal: %v", err)
		}
		var back Handler
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&back); err != nil {
			t.Fatalf("JSON config does not read back: %v\n%s", err, raw)
		}
		again, _ := json.Marshal(&back)
		if !bytes.Equal(raw, again) {
			t.Fatalf("JSON round trip differs:\n%s\n%s", raw, again)
		}
		// The parser only parses: what it lets through is judged here,
		// as a JSON config is, never with a panic.
		if err := checkOffline(&back); err != nil {
			return
		}
		if _, err := newBrowserPolicy(back.CORS); err != nil {
			t.Fatalf("cors passed the checks but its origins are not trusted origins: %v", err)
		}
	})
}

// checkOffline runs the checks of provisioning that need no Caddy
// context on h (a config as Caddy decodes it): the handler's defaults and
// checks, and those of its upstream and store modules when they are the
// built-in ones.
func checkOffline(h *Handler) error {
	globals := caddy.NewReplacer()
	if err := h.fill(globals); err != nil {
		return err
	}
	var u HTTPUpstream
	if ok, err := decodeGuest(h.UpstreamRaw, "kind", "http", &u); err != nil {
		return err
	} else if ok {
		if err := u.fill(globals); err != nil {
			return err
		}
		if err := u.check(globals); err != nil {
			return err
		}
	}
	var m MemoryStore
	if ok, err := decodeGuest(h.StoreRaw, "type", "memory", &m); err != nil {
		return err
	} else if ok {
		m.fill()
		if err := m.Validate(); err != nil {
			return err
		}
	}
	return h.check()
}

// decodeGuest decodes the guest module config raw into v, as Caddy does,
// if it is the module name (under inlineKey, or unnamed, which means
// name).
func decodeGuest(raw json.RawMessage, inlineKey, name string, v any) (bool, error) {
	if len(raw) == 0 {
		return false, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return false, err
	}
	if k, ok := m[inlineKey]; ok {
		if string(k) != strconv.Quote(name) {
			return false, nil
		}
		delete(m, inlineKey)
	}
	b, err := json.Marshal(m)
	if err != nil {
		return false, err
	}
	return true, caddy.StrictUnmarshalJSON(b, v)
}

// dispenser tokenizes body inside an a2a block. Not NewTestDispenser:
// that exits the process on a lexer error (the first crash the fuzzer
// found, kept as testdata/fuzz/FuzzUnmarshalCaddyfile/crash_*).
func dispenser(body string) (*caddyfile.Dispenser, bool) {
	tokens, err := caddyfile.Tokenize([]byte("a2a {\n"+body+"\n}"), "Caddyfile")
	if err != nil {
		return nil, false
	}
	return caddyfile.NewDispenser(tokens), true
}

// TestFuzzSeeds keeps the committed seed corpus meaningful: the seeds are
// the a2a blocks of the adapt goldens, so the valid ones must parse and
// the error_* ones (near misses, which steer the fuzzer to the checks)
// must fail, to parse or the checks after it; crash_* ones are
// regressions the fuzz target replays.
func TestFuzzSeeds(t *testing.T) {
	files, err := filepath.Glob("testdata/fuzz/FuzzUnmarshalCaddyfile/*")
	if err != nil || len(files) < 10 {
		t.Fatalf("%d seeds: %v", len(files), err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		_, lit, ok := strings.Cut(string(b), "\nstring(")
		if !ok {
			t.Fatalf("%s: not a string seed", f)
		}
		seed, err := strconv.Unquote(strings.TrimSuffix(strings.TrimSpace(lit), ")"))
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if strings.HasPrefix(filepath.Base(f), "crash_") {
			continue
		}
		d, ok := dispenser(seed)
		if !ok {
			t.Fatalf("%s: does not tokenize", f)
		}
		var h Handler
		err = h.UnmarshalCaddyfile(d)
		wantErr := strings.HasPrefix(filepath.Base(f), "error_")
		if err == nil && wantErr {
			err = checkOffline(&h)
		}
		if (err != nil) != wantErr {
			t.Errorf("%s: error %v", filepath.Base(f), err)
		}
	}
}
