package envfile_test

import (
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/internal/envfile"
)

func TestParse(t *testing.T) {
	data := strings.Join([]string{
		"# a comment",
		"",
		"export A=1",
		"B = two words ",
		`C="x\ny\"z\\w\q"`,
		`D='it\'s # not a comment'`,
		"E=value # a comment",
		"F=a#b",
		`G="v" # note`,
		"H=",
		"A=later",
		"I=trailing\\",
		"J=x=y",
	}, "\n")
	got, err := envfile.Parse([]byte(data))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"A": "later", "B": "two words", "C": "x\ny\"z\\wq", "D": "it's # not a comment",
		"E": "value", "F": "a#b", "G": `"v"`, "H": "", "I": `trailing\`, "J": "x=y",
	}
	if !maps.Equal(got, want) {
		t.Fatalf("Parse=%q, want %q", got, want)
	}
}

func TestParseBadLineNamesTheLine(t *testing.T) {
	for _, tc := range []struct{ data, want string }{
		{"A=1\nnot a pair\n", "2: invalid .env line 2: expected KEY=VALUE"},
		{"A=1\n\n1X=secret\n", `3: invalid .env line 3: invalid key "1X"`},
		{"A-B=1", `1: invalid .env line 1: invalid key "A-B"`},
	} {
		_, err := envfile.Parse([]byte(tc.data))
		if err == nil || demiurge.ErrorMessage(err) != tc.want {
			t.Errorf("Parse(%q) error=%v, want %q", tc.data, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "secret") {
			t.Errorf("error %q quotes the line's value", err)
		}
	}
}

func TestLoadRefusesWideModesAndSymlinks(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("modes are Unix")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, ".env")
	if f, err := envfile.Load(path); err != nil || f.Exists || len(f.Values) != 0 {
		t.Fatalf("missing file: %+v, %v; want empty", f, err)
	}
	if err := os.WriteFile(path, []byte("K=v\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := envfile.Load(path)
	if got := demiurge.ErrorMessage(err); demiurge.ErrorCode(err) != demiurge.ECONFIG || !strings.Contains(got, "mode 0644") || !strings.Contains(got, path) {
		t.Fatalf("wide mode: %v", err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := envfile.Load(path)
	if err != nil || !f.Exists || f.Values["K"] != "v" {
		t.Fatalf("Load=%+v, %v", f, err)
	}
	link := filepath.Join(dir, "link.env")
	if err := os.Symlink(path, link); err != nil {
		t.Fatal(err)
	}
	if _, err := envfile.Load(link); err == nil || !strings.Contains(demiurge.ErrorMessage(err), "symbolic link") {
		t.Fatalf("symlink: %v", err)
	}
	if err := os.WriteFile(path, []byte("K=v\nbad\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := envfile.Load(path); err == nil || demiurge.ErrorMessage(err) != path+":2: invalid .env line 2: expected KEY=VALUE" {
		t.Fatalf("bad line: %v", err)
	}
}

func TestUpsertKeepsOtherLines(t *testing.T) {
	in := "# keys\nexport OPENAI_API_KEY=old\nOTHER=1 # keep\nOPENAI_API_KEY=dup\n"
	got := string(envfile.Upsert([]byte(in), "OPENAI_API_KEY", "n\"e\\w"))
	want := "# keys\nOPENAI_API_KEY=\"n\\\"e\\\\w\"\nOTHER=1 # keep\n"
	if got != want {
		t.Fatalf("Upsert=%q, want %q", got, want)
	}
	vals, err := envfile.Parse([]byte(got))
	if err != nil || vals["OPENAI_API_KEY"] != "n\"e\\w" || vals["OTHER"] != "1" {
		t.Fatalf("round trip: %q, %v", vals, err)
	}
	if got, want := string(envfile.Upsert([]byte("A=1"), "B", "x")), "A=1\n\nB=\"x\"\n"; got != want {
		t.Fatalf("append=%q, want %q", got, want)
	}
	if got, want := string(envfile.Upsert(nil, "B", "x")), "B=\"x\"\n"; got != want {
		t.Fatalf("new=%q, want %q", got, want)
	}
}

func TestLayerExplicitEnvironmentWins(t *testing.T) {
	f := &envfile.File{Values: map[string]string{"A": "file", "B": "file"}}
	env := map[string]string{"A": "shell", "B": ""}
	get := envfile.Layer(func(k string) string { return env[k] }, f)
	if got, want := get("A"), "shell"; got != want {
		t.Errorf("A=%q, want %q", got, want)
	}
	if got, want := get("B"), "file"; got != want {
		t.Errorf("B=%q, want %q (an empty variable is unset)", got, want)
	}
}

// FuzzParse: Parse never panics, its errors never quote the input, and a
// value Upsert writes reads back as written.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{"A=1\n", "export B='x\\'y'\n", `C="a\nb\\"c"`, "# c\n\nD = v # note\n", "bad line\n", "1A=x", "E=\"unterminated"} {
		f.Add(seed, "KEY", "va\"l\\ue\n#x")
	}
	f.Fuzz(func(t *testing.T, data, key, value string) {
		vals, err := envfile.Parse([]byte(data))
		if err != nil {
			if vals != nil {
				t.Fatalf("values with an error: %v", vals)
			}
			return
		}
		if !envfile.ValidKey(key) || strings.ContainsRune(value, '\r') {
			return
		}
		out := envfile.Upsert([]byte(data), key, value)
		got, err := envfile.Parse(out)
		if err != nil {
			t.Fatalf("Upsert made a file Parse refuses: %v\n%q", err, out)
		}
		if got[key] != strings.TrimSpace(value) && got[key] != value {
			t.Fatalf("%s=%q after Upsert(%q), want %q", key, got[key], data, value)
		}
		for k, v := range vals {
			if k != key && got[k] != v {
				t.Fatalf("Upsert changed %s: %q -> %q", k, v, got[k])
			}
		}
	})
}
