package btfinfo

import (
	"fmt"

	"github.com/cilium/ebpf/btf"
)

// Each calls fn for every type in the spec (for split specs: the module's
// types only), stopping early when fn returns false. Decoding errors and
// decoder panics on corrupt BTF are returned.
func (s *Spec) Each(fn func(Type) bool) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("corrupt BTF: %v", p)
		}
	}()
	for t, err := range s.spec.All() {
		if err != nil {
			return err
		}
		if !fn(t) {
			return nil
		}
	}
	return nil
}

// FuncNames returns the names of all BTF functions (with duplicates, in BTF
// order).
func (s *Spec) FuncNames() ([]string, error) {
	var names []string
	err := s.Each(func(t Type) bool {
		if f, ok := t.(*btf.Func); ok {
			names = append(names, f.Name)
		}
		return true
	})
	return names, err
}
