package gitrepo

import (
	"maps"
	"testing"

	"github.com/demiurge/demiurge/coretree"
)

// A revision moves to another repository as a pack: the first one whole,
// a later one as only what its parent lacks; the receiving repository
// reads every file of both, also when opened anew.
func TestPackAndImportMoveRevisionsBetweenRepositories(t *testing.T) {
	files := map[string]string{
		"agent.yaml":                "model: {}\n",
		"assistant/agent.yaml":      "id: assistant\n",
		"assistant/agent/SOUL.md":   "soul\n",
		"evolver/agent/SOUL.md":     "evolver soul\n",
		"evolver/agent/tools/x.txt": "x\n",
	}
	src, _ := newStorage(t, files)
	first, err := src.Live()
	if err != nil {
		t.Fatal(err)
	}
	dst, dp := newStorage(t, map[string]string{"other/agent.yaml": "id: other\n"})
	if dst.HasCommit(first) {
		t.Fatal("the receiving repository holds the revision before any import")
	}
	full, n, err := src.Pack(first, coretree.Hash{})
	if err != nil {
		t.Fatal(err)
	}
	// commit, root tree, assistant, assistant/agent, evolver, evolver/agent,
	// evolver/agent/tools, five blobs.
	if n != 12 {
		t.Fatalf("a whole revision packed %d objects, want 12", n)
	}
	if err := dst.ImportPack(full); err != nil {
		t.Fatal(err)
	}
	if !dst.HasCommit(first) {
		t.Fatal("the imported revision is not there")
	}

	tree, err := src.Files(first)
	if err != nil {
		t.Fatal(err)
	}
	edited := maps.Clone(tree)
	body := []byte("a better soul\n")
	edited["assistant/agent/SOUL.md"] = coretree.Entry{Hash: BlobHash(body), Mode: coretree.Regular}
	th, err := src.StoreTree(edited, map[string][]byte{"assistant/agent/SOUL.md": body})
	if err != nil {
		t.Fatal(err)
	}
	second, err := src.WriteCommit(th, []coretree.Hash{first}, "edit\n")
	if err != nil {
		t.Fatal(err)
	}
	thin, n, err := src.Pack(second, first)
	if err != nil {
		t.Fatal(err)
	}
	// commit, root tree, assistant, assistant/agent, the new blob.
	if n != 5 {
		t.Fatalf("a one-file change packed %d objects, want 5", n)
	}
	if err := dst.ImportPack(thin); err != nil {
		t.Fatal(err)
	}
	reopened, err := Open(dp, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := reopened.Files(second)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(files) {
		t.Fatalf("imported revision has %d files, want %d", len(got), len(files))
	}
	for rel, e := range got {
		want := files[rel]
		if rel == "assistant/agent/SOUL.md" {
			want = string(body)
		}
		data, err := reopened.Blob(e.Hash)
		if err != nil || string(data) != want {
			t.Fatalf("%s: %q, %v; want %q", rel, data, err, want)
		}
	}
	c, err := reopened.Commit(second)
	if err != nil || len(c.Parents) != 1 || c.Parents[0] != first || c.Message != "edit\n" {
		t.Fatalf("imported commit %+v, %v", c, err)
	}
	if err := dst.ImportPack([]byte("PACK not really")); err == nil {
		t.Fatal("a broken pack was imported")
	}
}
