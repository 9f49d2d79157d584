package faults

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/brokerdesk/brokerdesk/tenancy"
	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// TestFaults_SIGTERM sends SIGTERM to `brokerdesk serve` under GET /me and intake load: the
// requests in flight finish (answers keep arriving after the signal, none 5xx), every intake
// 201 is stored, and the process exits within SHUTDOWN_TIMEOUT. Requests sent after the
// listener closed fail to connect: that is the load balancer's cue, not an answer.
func TestFaults_SIGTERM(t *testing.T) {
	env, err := apitest.Open(apitest.Setup{OwnerURL: ownerURL, Env: map[string]string{"WEBHOOK_WORKERS": "0"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(env.Server.Close)
	const shutdownTimeout = 5 * time.Second
	p := env.StartServe(t, map[string]string{"SHUTDOWN_TIMEOUT": shutdownTimeout.String(), "WEBHOOK_WORKERS": "0"})
	co := env.NewCompany(t)
	y := newTally()
	l := &loader{base: p.URL, client: apitest.Client(t), meWorkers: 8, intakeWorkers: 4, y: y,
		secrets: newKeys(t, co, tenancy.KindSecret, 40, 500), pubs: newKeys(t, co, tenancy.KindPublishable, 40, 90)}
	// Warm up: the process's first requests and the client's validator.
	for range 3 {
		if st, _ := l.do(context.Background(), mustGet(t, p.URL+"/api/public/v1/me", co.Secret)); st != 200 {
			t.Fatalf("GET /me: %d", st)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	loadDone := make(chan struct{})
	go func() { l.run(ctx, t); close(loadDone) }()
	time.Sleep(1500 * time.Millisecond)
	before := y.answers()
	signalled := time.Now()
	exited := p.Terminate(shutdownTimeout + 2*time.Second)
	took := time.Since(signalled)
	cancel()
	<-loadDone
	after := y.answers() - before
	t.Logf("SIGTERM after %d answers; exit after %s; answers in all: %s", before, took.Round(time.Millisecond), y)
	if !exited {
		t.Fatalf("the process did not exit within SHUTDOWN_TIMEOUT %s (+2 s):\n%s", shutdownTimeout, p.Output())
	}
	if took > shutdownTimeout+time.Second {
		t.Errorf("exit took %s, want within SHUTDOWN_TIMEOUT %s", took, shutdownTimeout)
	}
	for _, op := range []string{"me", "intake"} {
		for status, n := range y.counts[op] {
			if status >= 500 {
				t.Errorf("%s answered %d %d times", op, status, n)
			}
		}
	}
	if before == 0 {
		t.Fatalf("no answers before SIGTERM: %s", y)
	}
	t.Logf("%d answers arrived after the signal, %d transport errors (sent after the listener closed)", after, y.count("me", 0)+y.count("intake", 0))
	assertStored(t, co.ID.String(), y.created)
}

func mustGet(t *testing.T, url, key string) *http.Request {
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	return req
}
