package server

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/brokerdesk/brokerdesk/app"
	"github.com/brokerdesk/brokerdesk/app/platform/tracing"
	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// rawConn is one keep-alive TCP connection to the server, spoken in hand-written HTTP/1.1, so
// that consecutive requests really share fasthttp's per-connection buffers (App.Test and
// net/http's pool do not promise that).
type rawConn struct {
	c net.Conn
	r *bufio.Reader
}

func dialRaw(t *testing.T, base string) *rawConn {
	t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &rawConn{c: c, r: bufio.NewReader(c)}
}

// do writes one request and reads its answer whole, leaving the connection open.
func (rc *rawConn) do(t *testing.T, method, path string, header map[string]string, body string) (int, []byte) {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: keep-alive\r\n", method, path)
	for k, v := range header {
		fmt.Fprintf(&b, "%s: %s\r\n", k, v)
	}
	if body != "" {
		fmt.Fprintf(&b, "Content-Type: application/json\r\nContent-Length: %d\r\n", len(body))
	}
	b.WriteString("\r\n" + body)
	_ = rc.c.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := io.WriteString(rc.c, b.String()); err != nil {
		t.Fatalf("%s %s: write: %v", method, path, err)
	}
	resp, err := http.ReadResponse(rc.r, nil)
	if err != nil {
		t.Fatalf("%s %s: read: %v", method, path, err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: body: %v", method, path, err)
	}
	if resp.Close {
		t.Fatalf("%s %s: the server closed the connection; the test needs it kept alive", method, path)
	}
	return resp.StatusCode, out
}

// TestServer_KeepAliveRequestsKeepTheirOwnStrings catches strings taken from fasthttp's request
// buffers and kept after the request (issue 20 D): the method label of the metrics pointed into
// the connection's buffer, so GET /event-types followed by POST /tasks on one connection was
// counted as method "POS", and POST, PATCH, POST interleaved on two connections made two series
// with identical labels, after which every scrape of /metrics answered 500. A trace's span
// exported after the request carried the same method and the client's request id and
// tracestate, equally overwritten. The requests below interleave methods of different lengths
// on two keep-alive connections; then every counted series must name exactly the methods,
// routes and statuses sent, /metrics must answer 200, and every span must carry its own
// request's method, route, request id and tracestate.
func TestServer_KeepAliveRequestsKeepTheirOwnStrings(t *testing.T) {
	t.Parallel()
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	env := apitest.New(t, app.WithTracing(tracing.New(tp))) // a server of its own: counts start at 0
	co := env.NewCompany(t)
	base := env.Listen(t)
	conns := []*rawConn{dialRaw(t, base), dialRaw(t, base)}

	type sent struct{ method, route, requestID, traceState string }
	type series struct{ route, method, status string }
	wantCounts := map[series]int{}
	byID := map[string]sent{}
	taskIDs := map[int]string{} // connection -> the task it created last
	const v1 = "/api/public/v1"
	n := 0
	send := func(conn int, method, path, route, body string) []byte {
		t.Helper()
		n++
		// Ids and trace states of different lengths, so a shorter one that a longer one
		// overwrote shows up as neither.
		s := sent{method: method, route: route, requestID: fmt.Sprintf("keepalive-%d-%s", n, strings.Repeat("x", n)),
			traceState: fmt.Sprintf("bd=r%d%s", n, strings.Repeat("y", 10-n%10))}
		h := map[string]string{"X-Request-Id": s.requestID, "Accept": "application/json",
			"traceparent": fmt.Sprintf("00-%032x-%016x-01", n, n), "tracestate": s.traceState}
		if strings.HasPrefix(path, v1) {
			h["Authorization"] = "Bearer " + co.Secret
		}
		status, out := conns[conn].do(t, method, path, h, body)
		if status >= 500 {
			t.Fatalf("%s %s: %d %s", method, path, status, out)
		}
		wantCounts[series{route, method, strconv.Itoa(status)}]++
		byID[s.requestID] = s
		return out
	}
	post := func(conn int) {
		out := send(conn, "POST", v1+"/tasks", v1+"/tasks", `{"title":"keep-alive task"}`)
		var task struct{ ID string }
		if err := json.Unmarshal(out, &task); err != nil || task.ID == "" {
			t.Fatalf("POST /tasks answered %s", out)
		}
		taskIDs[conn] = task.ID
	}
	patch := func(conn int) {
		send(conn, "PATCH", v1+"/tasks/"+taskIDs[conn], v1+"/tasks/:taskId", `{"title":"patched"}`)
	}
	send(0, "GET", "/healthz", "/healthz", "")
	send(0, "GET", v1+"/event-types", v1+"/event-types", "")
	post(0) // "GET" kept from the request before reads "POS" now
	post(1)
	patch(1)
	patch(0)
	post(0)
	send(1, "GET", v1+"/event-types", v1+"/event-types", "")
	post(1)
	send(1, "DELETE", v1+"/tasks/"+taskIDs[1], v1+"/tasks/:taskId", "")
	send(0, "GET", "/healthz", "/healthz", "")
	patch(0)

	t.Run("metrics name exactly the requests sent and /metrics answers 200", func(t *testing.T) {
		rec := httptest.NewRecorder()
		env.Server.Metrics().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
		if rec.Code != 200 {
			t.Fatalf("scrape: %d %s", rec.Code, rec.Body.String())
		}
		got := map[series]int{}
		const name = "brokerdesk_http_requests_total{"
		for _, line := range strings.Split(rec.Body.String(), "\n") {
			if !strings.HasPrefix(line, name) {
				continue
			}
			labels, value, _ := strings.Cut(strings.TrimPrefix(line, name), "} ")
			var s series
			for _, kv := range strings.Split(labels, ",") {
				k, v, _ := strings.Cut(kv, "=")
				v, _ = strconv.Unquote(v)
				switch k {
				case "route":
					s.route = v
				case "method":
					s.method = v
				case "status":
					s.status = v
				}
			}
			c, err := strconv.Atoi(value)
			if err != nil {
				t.Fatalf("series %q: %v", line, err)
			}
			got[s] += c
		}
		for s, c := range got {
			if wantCounts[s] != c {
				t.Errorf("series %+v counted %d, want %d", s, c, wantCounts[s])
			}
		}
		for s, c := range wantCounts {
			if got[s] != c {
				t.Errorf("series %+v counted %d, want %d", s, got[s], c)
			}
		}
	})

	t.Run("each request's span carries its own method, route, request id and tracestate", func(t *testing.T) {
		seen := 0
		for _, s := range exp.GetSpans().Snapshots() {
			if s.SpanKind() != trace.SpanKindServer {
				continue
			}
			attrs := map[string]string{}
			for _, a := range s.Attributes() {
				attrs[string(a.Key)] = a.Value.Emit()
			}
			want, ok := byID[attrs["brokerdesk.request_id"]]
			if !ok {
				t.Errorf("span %q: request id %q is none of those sent", s.Name(), attrs["brokerdesk.request_id"])
				continue
			}
			seen++
			if s.Name() != want.method+" "+want.route {
				t.Errorf("span %q of request %s, want %q", s.Name(), want.requestID, want.method+" "+want.route)
			}
			if attrs["http.request.method"] != want.method || attrs["http.route"] != want.route {
				t.Errorf("span of %s %s (request %s): method %q route %q", want.method, want.route, want.requestID,
					attrs["http.request.method"], attrs["http.route"])
			}
			if ts := s.SpanContext().TraceState().String(); ts != want.traceState {
				t.Errorf("span of %s %s (request %s): tracestate %q, want %q", want.method, want.route, want.requestID, ts, want.traceState)
			}
		}
		if seen != n {
			t.Errorf("%d server spans matched a request, want %d", seen, n)
		}
	})
}
