package etcdlease_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/fencecheck/fencecheck/history"
	"github.com/fencecheck/fencecheck/lease"
	"github.com/fencecheck/fencecheck/lease/etcdcluster"
	"github.com/fencecheck/fencecheck/lease/etcdlease"
	"github.com/fencecheck/fencecheck/spec"
)

// Two holders on one lock of an etcd (here a one-member cluster embedded in
// the example), recording one history; the holders raise a fence of their
// own (a map standing in for the sink) before their grants count.
func Example() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "etcdlease-example-")
	defer os.RemoveAll(dir)
	cluster, err := etcdcluster.Start(ctx, dir, 1)
	if err != nil {
		log.Fatal(err)
	}
	defer cluster.Close()
	cli, err := clientv3.New(clientv3.Config{Endpoints: cluster.Endpoints(), DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		log.Fatal(err)
	}
	defer cli.Close()

	rec := history.NewRecorder(history.Header{TimeUnit: "ns", Expect: []string{spec.AbsoluteValidity}},
		history.MonotonicClock(time.Nanosecond), nil)
	fence := map[string]int64{}
	raise := func(_ context.Context, resource string, token int64) (int64, bool, error) {
		if fence[resource] >= token {
			return fence[resource], false, nil
		}
		fence[resource] = token
		return token, true, nil
	}
	locker := func(name string) *etcdlease.Locker {
		return &etcdlease.Locker{Client: cli, Prefix: "/example/", Raise: raise, Recording: lease.Recording{
			Log: lease.RecorderLog(rec), Holder: lease.Holder{Process: name, Owner: name, Incarnation: "1"}}}
	}
	a, b := locker("a"), locker("b")

	la, err := a.TryAcquire(ctx, "job-1", "a-1", time.Second)
	if err != nil {
		log.Fatal(err)
	}
	_, err = b.TryAcquire(ctx, "job-1", "b-1", time.Second)
	fmt.Println("b while a holds:", err)
	fmt.Println("a renews:", la.Renew(ctx))
	fmt.Println("a releases:", la.Release(ctx))
	lb, err := b.TryAcquire(ctx, "job-1", "b-2", time.Second)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("b's token is larger:", lb.Token() > la.Token(), "and the fence is at it:", fence["job-1"] == lb.Token())
	lb.Release(ctx)

	for _, e := range rec.History().Events {
		fmt.Println(e.Process, e.Type, e.F)
	}
	report := spec.Check(rec.History(), spec.Options{})
	fmt.Println("violations:", len(report.Violations))
	// Output:
	// b while a holds: held
	// a renews: <nil>
	// a releases: <nil>
	// b's token is larger: true and the fence is at it: true
	// a invoke acquire
	// a/fence invoke advance
	// a/fence ok advance
	// a ok acquire
	// b invoke acquire
	// b fail acquire
	// a invoke renew
	// a ok renew
	// a invoke release
	// a ok release
	// b invoke acquire
	// b/fence invoke advance
	// b/fence ok advance
	// b ok acquire
	// b invoke release
	// b ok release
	// violations: 0
}
