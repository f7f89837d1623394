package safedir_test

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gprobe/gprobe/internal/safedir"
	"github.com/gprobe/gprobe/internal/testenv"
)

func TestCheckOtherOwners(t *testing.T) {
	uid, gid := testenv.Nobody(t)
	u := struct{ Uid, Gid string }{strconv.Itoa(uid), strconv.Itoa(gid)}
	base := t.TempDir()
	theirs := filepath.Join(base, "theirs")
	os.MkdirAll(filepath.Join(theirs, "mine"), 0o700)
	os.Chown(theirs, uid, gid)
	group := filepath.Join(base, "group")
	os.Mkdir(group, 0o770)
	os.Chmod(group, 0o770)
	os.Chown(group, 0, gid)
	for dir, want := range map[string]string{
		theirs:                        "owned by uid " + u.Uid + " (gprobe runs as uid 0)",
		filepath.Join(theirs, "mine"): theirs + " above it is owned by uid " + u.Uid,
		group:                         "writable by group " + u.Gid,
	} {
		if err := safedir.Check(dir); !errors.Is(err, safedir.ErrUnsafe) || !strings.Contains(err.Error(), want) {
			t.Errorf("Check(%s) = %v, want %q", dir, err, want)
		}
	}
}
