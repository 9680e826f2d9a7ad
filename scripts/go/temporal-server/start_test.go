// R22: the command line scripts/cluster.sh uses to run one Temporal service per process (`start --service NAME`).
package main

import (
	"reflect"
	"testing"
)

func TestParseStart(t *testing.T) {
	for _, c := range []struct {
		args []string
		want []string
		bad  bool
	}{
		{args: nil, want: nil},
		{args: []string{"--service", "history"}, want: []string{"history"}},
		{args: []string{"--service", "frontend", "-s", "matching"}, want: []string{"frontend", "matching"}},
		{args: []string{"--service=internal-frontend"}, want: []string{"internal-frontend"}},
		{args: []string{"--service", "histroy"}, bad: true},
		{args: []string{"extra"}, bad: true},
		{args: []string{"--nope"}, bad: true},
	} {
		got, err := parseStart(c.args)
		if c.bad {
			if err == nil {
				t.Errorf("parseStart(%q) = %q, want an error", c.args, got)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("parseStart(%q) = %q, %v; want %q", c.args, got, err, c.want)
		}
	}
}
