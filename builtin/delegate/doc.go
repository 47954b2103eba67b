// Package delegate holds delegate_task, which hands the call to the
// Host's Delegator (package delegation): it reads the arguments itself and
// names its own sentences for arguments the schema refuses.
package delegate
