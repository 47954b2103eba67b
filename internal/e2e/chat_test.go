package e2e

import (
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "modernc.org/sqlite"
)

func TestChatLoop(t *testing.T) {
	e := newEnv(t)
	r := e.run("hello\n/sessions\n/new\nagain\n/bogus\n/exit\nnever sent\n", "chat")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	for _, want := range []string{"[fake] hello\n", "[fake] again\n", "SESSION"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
		}
	}
	if strings.Contains(r.stdout, "never sent") {
		t.Error("input after /exit was processed")
	}
	if !strings.Contains(r.stderr, "unknown command: /bogus") {
		t.Errorf("stderr %q", r.stderr)
	}
	// The assistant text is printed once, not once streamed and once delivered.
	if n := strings.Count(r.stdout, "[fake] hello"); n != 1 {
		t.Errorf("reply printed %d times", n)
	}
	list := e.run("", "sessions", "list")
	if got := strings.Count(list.stdout, "session_"); got != 2 {
		t.Fatalf("/new should leave two sessions, list shows %d:\n%s", got, list.stdout)
	}
	// /resume switches back to an existing session.
	first := strings.Fields(strings.Split(strings.TrimSpace(list.stdout), "\n")[2])[0]
	r = e.run("/resume "+first+"\nthird\n", "chat")
	if r.code != 0 || !strings.Contains(r.stdout, "resumed "+first) {
		t.Fatalf("resume: %d %s %s", r.code, r.stdout, r.stderr)
	}
}

func TestForeignOrNewerDatabaseRefusedUnchanged(t *testing.T) {
	for name, prepare := range map[string]string{
		"foreign": "CREATE TABLE customers(id INTEGER PRIMARY KEY, name TEXT); INSERT INTO customers(name) VALUES ('x');",
		"garbage": "",
	} {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			if r := e.run("", "init"); r.code != 0 {
				t.Fatal(r.stderr)
			}
			db := filepath.Join(e.home, "runtime", "runtime.sqlite3")
			for _, suffix := range []string{"", "-wal", "-shm"} {
				os.Remove(db + suffix)
			}
			if prepare != "" {
				conn, err := sql.Open("sqlite", db)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := conn.Exec(prepare); err != nil {
					t.Fatal(err)
				}
				conn.Close()
			} else if err := os.WriteFile(db, []byte(strings.Repeat("not a database ", 512)), 0o600); err != nil {
				t.Fatal(err)
			}
			before, _ := os.ReadFile(db)
			r := e.run("", "run", "hi")
			if r.code != 2 || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
				t.Fatalf("exit %d stderr %q", r.code, r.stderr)
			}
			after, _ := os.ReadFile(db)
			if string(before) != string(after) {
				t.Fatal("a database that is not ours was modified")
			}
		})
	}
}
