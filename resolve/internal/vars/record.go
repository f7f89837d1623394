package vars

import "debug/dwarf"

// isRecord reports a type whose members a fetch argument can reach with
// '.' or '->': a structure or a union, as perf 6.1 allows, and a C++
// class, which perf 6.1 refuses ("this is not a data structure nor a
// union.") though its members are laid out as a structure's: this->field
// in a method of a class.
func isRecord(t *dwarf.Entry) bool {
	switch t.Tag {
	case dwarf.TagStructType, dwarf.TagUnionType, dwarf.TagClassType:
		return true
	}
	return false
}
