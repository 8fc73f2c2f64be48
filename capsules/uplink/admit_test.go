package uplink

import (
	"testing"
	"time"
)

// Which client gives up its slot at a full table: never a busy one, never
// the owner's to another uid, one without subscriptions before one with,
// then the one idle longest; none idle enough yet says how long to wait.
func TestPickVictim(t *testing.T) {
	const s = time.Second
	const minIdle, minSubbed = 1 * s, 60 * s
	for _, tc := range []struct {
		name     string
		cs       []candidate
		owner    bool
		want     int
		wantWait time.Duration
	}{
		{"longest idle", []candidate{{idle: 2 * s}, {idle: 5 * s}, {idle: 3 * s}}, true, 1, 0},
		{"busy is kept", []candidate{{idle: 9 * s, busy: true}, {idle: 2 * s}}, true, 1, 0},
		{"unsubscribed first", []candidate{{idle: 90 * s, subscribed: true}, {idle: 2 * s}}, true, 1, 0},
		{"subscribed when idle long enough", []candidate{{idle: 90 * s, subscribed: true}, {idle: 30 * s, subscribed: true}}, true, 0, 0},
		{"subscribed not yet", []candidate{{idle: 30 * s, subscribed: true}}, true, -1, 30 * s},
		{"none idle enough: wait for the first", []candidate{{idle: s / 2}, {idle: s / 4}}, true, -1, s / 2},
		{"another uid cannot take the owner's", []candidate{{owner: true, idle: 9 * s}, {idle: 2 * s}}, false, 1, 0},
		{"another uid, only owners", []candidate{{owner: true, idle: 9 * s}}, false, -1, -1},
		{"the owner takes another's", []candidate{{idle: 2 * s}, {owner: true, idle: 9 * s}}, true, 1, 0},
		{"all busy", []candidate{{busy: true, idle: 9 * s}}, true, -1, -1},
		{"empty", nil, true, -1, -1},
	} {
		got, wait := pickVictim(tc.cs, tc.owner, minIdle, minSubbed)
		if got != tc.want || wait != tc.wantWait {
			t.Errorf("%s: pickVictim = %d, %s; want %d, %s", tc.name, got, wait, tc.want, tc.wantWait)
		}
	}
}

func TestOwnerReserve(t *testing.T) {
	for max, want := range map[int]int{1: 0, 15: 0, 16: 1, 128: 8, 1000: 62} {
		if got := ownerReserve(max); got != want {
			t.Errorf("ownerReserve(%d) = %d, want %d", max, got, want)
		}
	}
}
