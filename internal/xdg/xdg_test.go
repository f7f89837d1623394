package xdg_test

import (
	"errors"
	"testing"

	"github.com/gprobe/gprobe/internal/xdg"
)

func TestCacheHome(t *testing.T) {
	for _, tc := range []struct {
		xdg, home, want string
		err             error
	}{
		{xdg: "/x/cache", home: "/home/u", want: "/x/cache"},
		{xdg: "", home: "/home/u", want: "/home/u/.cache"},
		{xdg: "relative/cache", home: "/home/u", want: "/home/u/.cache"},
		{xdg: "/x/cache", home: "", want: "/x/cache"},
		{xdg: "", home: "", err: xdg.ErrNoHome},
	} {
		t.Setenv("XDG_CACHE_HOME", tc.xdg)
		t.Setenv("HOME", tc.home)
		got, err := xdg.CacheHome()
		if got != tc.want || !errors.Is(err, tc.err) {
			t.Errorf("XDG_CACHE_HOME=%q HOME=%q: %q, %v; want %q, %v", tc.xdg, tc.home, got, err, tc.want, tc.err)
		}
		g, err := xdg.GprobeCache()
		if tc.err == nil && (err != nil || g != tc.want+"/gprobe") {
			t.Errorf("GprobeCache with XDG_CACHE_HOME=%q HOME=%q: %q, %v", tc.xdg, tc.home, g, err)
		}
	}
}
