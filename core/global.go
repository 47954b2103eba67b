package core

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/internal/yamlx"
)

// GlobalConfig is the global fallback <home>/agents/agent.yaml. It is not a
// core: it may set only model, ui and approval, which apply where a core
// leaves them unset (approval only ever tightens).
type GlobalConfig struct {
	Model    ModelConfig    `yaml:"model"`
	UI       UIConfig       `yaml:"ui"`
	Approval ApprovalConfig `yaml:"approval"`
}

// LoadGlobal reads the global fallback at path. A missing file is an empty
// configuration. Errors are ECONFIG, one line, naming the file ("agents/
// agent.yaml" when it sits in an agents directory) and line; any key other
// than model, ui and approval is refused with a message naming those three.
func LoadGlobal(path string) (*GlobalConfig, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, demiurge.WrapError(demiurge.ECONFIG, err, "invalid global config path %q", path)
	}
	shown := filepath.ToSlash(abs)
	if filepath.Base(filepath.Dir(abs)) == "agents" {
		shown = "agents/" + filepath.Base(abs)
	}
	data, err := readLimited(abs, yamlx.MaxBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return &GlobalConfig{}, nil
	}
	if err != nil {
		return nil, demiurge.WrapError(demiurge.ECONFIG, err, "%s: cannot read: %s", shown, demiurge.IOReason(err))
	}
	doc, err := yamlx.Parse(shown, data)
	if err != nil {
		return nil, err
	}
	var g GlobalConfig
	if err := doc.Decode(&g); err != nil {
		var ke *yamlx.KeyError
		if errors.As(err, &ke) && !ke.Duplicate && ke.Parent == "" {
			return nil, &demiurge.Error{Code: demiurge.ECONFIG, Err: ke, Message: fmt.Sprintf(
				"%s:%d: unknown key %s: the global fallback config may only set %s", shown, ke.Line, quoteShort(ke.Key), strings.Join(ke.Expected, ", "))}
		}
		return nil, err
	}
	if err := validateModel(doc, g.Model); err != nil {
		return nil, err
	}
	if err := validateUI(doc, g.UI); err != nil {
		return nil, err
	}
	if err := validateApproval(doc, g.Approval); err != nil {
		return nil, err
	}
	return &g, nil
}

// readLimited reads a regular file of at most limit bytes.
func readLimited(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if info, err := f.Stat(); err != nil {
		return nil, err
	} else if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("not a regular file")
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("file is larger than %d bytes", limit)
	}
	return data, nil
}
