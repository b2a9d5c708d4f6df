package model

import (
	"cmp"
	"math/rand/v2"
	"testing"
)

// TestLessMsgIsFieldOrder checks lessMsg's two-word comparison against the
// order it stands for, field by field in declaration order with empty
// slots last, on random messages whose fields take few values (so that
// ties, which only later fields break, are common).
func TestLessMsgIsFieldOrder(t *testing.T) {
	fields := func(m *Msg) []int {
		return []int{int(m.Kind), int(m.Worker), int(m.Res), int(m.Replica), int(m.Inc), int(m.Token), int(m.Req),
			int(m.Grant), int(m.Code), int(m.PW), int(m.PT), int(m.Age), int(uint8(m.Skew)), b2i(m.Live), int(m.Key), int(m.U)}
	}
	want := func(a, b *Msg) bool {
		if a.Kind == MsgNone || b.Kind == MsgNone {
			return b.Kind == MsgNone && a.Kind != MsgNone
		}
		fa, fb := fields(a), fields(b)
		for i := range fa {
			if c := cmp.Compare(fa[i], fb[i]); c != 0 {
				return c < 0
			}
		}
		return false
	}
	r := rand.New(rand.NewPCG(1, 2))
	v := func() uint8 { return uint8(r.IntN(3)) * 127 } // 0, 127, 254: the top bit too
	msg := func() Msg {
		return Msg{Kind: v(), Worker: v(), Res: v(), Replica: v(), Inc: v(), Token: v(), Req: v(), Grant: v(),
			Code: v(), PW: v(), PT: v(), Age: v(), Skew: int8(v()), Live: r.IntN(2) == 1, Key: v(), U: v()}
	}
	for i := range 200000 {
		a, b := msg(), msg()
		if i%3 == 0 {
			b = a
			b.U = v() // differ in the last byte only
		}
		if got, w := lessMsg(&a, &b), want(&a, &b); got != w {
			t.Fatalf("lessMsg(%+v, %+v) = %v, want %v", a, b, got, w)
		}
	}
}

func b2i(v bool) int {
	if v {
		return 1
	}
	return 0
}
