package examples_test

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// mdLink is a Markdown link or image outside code: its target.
var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// TestDocLinks follows every relative link of README.md, BENCHMARKS.md,
// xcaddy.md (a pointer to docs/xcaddy.md) and the pages under docs/: the file it names exists, and the anchor it names
// is a heading of that page (as GitHub spells it).
func TestDocLinks(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	names := append(pages(t, root), "BENCHMARKS.md", "xcaddy.md")
	anchors := map[string]map[string]bool{}
	for _, n := range names {
		anchors[filepath.Join(root, n)] = headingAnchors(t, filepath.Join(root, n))
	}
	links := 0
	for _, n := range names {
		from := filepath.Join(root, n)
		forLines(t, from, func(line int, text string) {
			for _, m := range mdLink.FindAllStringSubmatch(text, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				links++
				path, anchor, _ := strings.Cut(target, "#")
				file := from
				if path != "" {
					file = filepath.Join(filepath.Dir(from), path)
					if _, err := os.Stat(file); err != nil {
						t.Errorf("%s:%d: the link %s names no file", n, line, target)
						continue
					}
				}
				if anchor == "" {
					continue
				}
				a, ok := anchors[file]
				if !ok {
					t.Errorf("%s:%d: the link %s has an anchor on a page that is not documentation", n, line, target)
				} else if !a[anchor] {
					t.Errorf("%s:%d: the link %s names no heading of %s", n, line, target, filepath.Base(file))
				}
			}
		})
	}
	if links < 80 {
		t.Fatalf("found only %d relative links", links)
	}
}

// forLines calls f with each line of a Markdown file outside fenced code,
// and with its number.
func forLines(t *testing.T, file string, f func(line int, text string)) {
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	inFence := false
	for n := 1; sc.Scan(); n++ {
		l := sc.Text()
		if strings.HasPrefix(l, "```") {
			inFence = !inFence
			continue
		}
		if !inFence {
			f(n, l)
		}
	}
}

// headingAnchors are the anchors GitHub gives a page's headings: lower
// case, punctuation but '-' and '_' dropped, spaces as '-', and a repeated
// one numbered from -1.
func headingAnchors(t *testing.T, file string) map[string]bool {
	seen := map[string]int{}
	anchors := map[string]bool{}
	forLines(t, file, func(_ int, l string) {
		hashes := len(l) - len(strings.TrimLeft(l, "#"))
		if hashes == 0 || hashes > 6 || !strings.HasPrefix(l[hashes:], " ") {
			return
		}
		var b strings.Builder
		for _, r := range strings.ToLower(strings.TrimSpace(l[hashes:])) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		a := b.String()
		if n := seen[a]; n > 0 {
			anchors[fmt.Sprintf("%s-%d", a, n)] = true
		} else {
			anchors[a] = true
		}
		seen[a]++
	})
	return anchors
}

// TestLayoutTable: the architecture page's layout table names every file
// at the repository's root and every directory ("*_test.go" stands for the
// root's tests; a directory may be named by its subdirectories), so that it stays the complete map it says it is.
func TestLayoutTable(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(filepath.Join(root, "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, layout, ok := strings.Cut(string(page), "\n## Layout\n")
	if !ok {
		t.Fatal("docs/architecture.md has no Layout section")
	}
	if i := strings.Index(layout, "\n## "); i >= 0 {
		layout = layout[:i]
	}
	// The tracked files, so that a build's output in a working copy is not
	// asked for; without git (a source archive), what is there.
	var entries []string
	if out, err := exec.Command("git", "-C", root, "ls-files").Output(); err == nil && len(out) > 0 {
		seen := map[string]bool{}
		for _, f := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			top, _, isDir := strings.Cut(f, "/")
			if isDir {
				top += "/"
			}
			if !seen[top] {
				seen[top] = true
				entries = append(entries, top)
			}
		}
	} else {
		dir, err := os.ReadDir(root)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range dir {
			if e.Name() == ".git" {
				continue
			}
			name := e.Name()
			if e.IsDir() {
				name += "/"
			}
			entries = append(entries, name)
		}
	}
	for _, e := range entries {
		if strings.HasSuffix(e, "_test.go") {
			e = "*_test.go"
		}
		// A directory is named whole (`push/`) or by its parts
		// (`binding/rest/`).
		if !strings.Contains(layout, "`"+e+"`") && !(strings.HasSuffix(e, "/") && strings.Contains(layout, "`"+e)) {
			t.Errorf("docs/architecture.md's layout table does not name `%s`", e)
		}
	}
	if len(entries) < 30 {
		t.Fatalf("found only %d entries at the root", len(entries))
	}
}
