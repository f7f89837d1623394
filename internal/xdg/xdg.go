// Package xdg finds the XDG base directory for caches, where gprobe keeps
// its own (the DWARF index cache) and elfutils' debuginfod client keeps
// its downloads. It is the one place either is computed.
package xdg

import (
	"errors"
	"os"
	"path/filepath"
)

// ErrNoHome: neither $XDG_CACHE_HOME (absolute) nor $HOME says where the
// caches go.
var ErrNoHome = errors.New("neither $XDG_CACHE_HOME nor $HOME is set")

// CacheHome is $XDG_CACHE_HOME when it is an absolute path (the XDG Base
// Directory Specification ignores a relative one), else $HOME/.cache;
// ErrNoHome when neither is set.
func CacheHome() (string, error) {
	if d := os.Getenv("XDG_CACHE_HOME"); filepath.IsAbs(d) {
		return d, nil
	}
	if home := os.Getenv("HOME"); home != "" {
		return filepath.Join(home, ".cache"), nil
	}
	return "", ErrNoHome
}

// GprobeCache is the root of gprobe's own caches: CacheHome()/gprobe.
func GprobeCache() (string, error) {
	d, err := CacheHome()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "gprobe"), nil
}
