package core

// HasPython reports whether any slot (discovered, in or out of a pipeline)
// or authored tool of c is a Python module: such a core needs the Host's
// Python worker (config.yaml runtime.python).
func (c *Core) HasPython() bool {
	for _, slots := range c.AllSlots {
		for _, s := range slots {
			if IsPython(s.ModulePath) {
				return true
			}
		}
	}
	for _, t := range c.Tools {
		if IsPython(t.ModulePath) {
			return true
		}
	}
	return false
}
