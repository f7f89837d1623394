package testenv

import (
	"os"
	"os/user"
	"strconv"
	"testing"
)

// Nobody returns the uid and gid of user nobody, for tests that plant
// files owned by another user; giving files away takes root, so the test
// is skipped otherwise.
func Nobody(tb testing.TB) (uid, gid int) {
	tb.Helper()
	if os.Geteuid() != 0 {
		tb.Skip("needs root to give files to another user")
	}
	u, err := user.Lookup("nobody")
	if err != nil {
		tb.Skip(err)
	}
	uid, _ = strconv.Atoi(u.Uid)
	gid, _ = strconv.Atoi(u.Gid)
	return uid, gid
}
