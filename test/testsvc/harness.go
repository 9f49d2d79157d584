package testsvc

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// RunProcesses runs n copies of the current test binary at once, as `go test` runs the
// binaries of many packages, each running only test with env added, and returns the Service
// each reported with PrintResult. It is how the harness's own tests start services from
// several processes.
func RunProcesses(ctx context.Context, t testing.TB, n int, test string, env ...string) []Service {
	t.Helper()
	var wg sync.WaitGroup
	results := make([]Service, n)
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^"+test+"$", "-test.count=1")
			cmd.Env = append(os.Environ(), env...)
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			if err := cmd.Run(); err != nil {
				errs[i] = fmt.Errorf("process %d: %v\n%s", i, err, out.String())
				return
			}
			sc := bufio.NewScanner(&out)
			for sc.Scan() {
				if j, ok := strings.CutPrefix(sc.Text(), resultPrefix); ok {
					errs[i] = json.Unmarshal([]byte(j), &results[i])
					return
				}
			}
			errs[i] = fmt.Errorf("process %d reported no result:\n%s", i, out.String())
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	return results
}

// OneStarted fails t unless the processes of RunProcesses all got the same server and exactly
// one of them started it; it returns that server.
func OneStarted(t testing.TB, results []Service) Service {
	t.Helper()
	started := 0
	for _, r := range results {
		if r.URL != results[0].URL {
			t.Errorf("one process got %s, another %s: want one server for all", r.URL, results[0].URL)
		}
		if r.Started {
			started++
		}
	}
	if started != 1 {
		t.Fatalf("%d of %d processes started the server, want exactly 1: %+v", started, len(results), results)
	}
	return results[0]
}

// UsableTempDir returns a temp dir the postgres user can reach: as root a private cluster runs
// as postgres, and t.TempDir makes its directories 0700.
func UsableTempDir(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	if os.Geteuid() == 0 {
		for d, i := dir, 0; i < 2 && d != os.TempDir() && d != "/"; d, i = filepath.Dir(d), i+1 {
			if err := os.Chmod(d, 0o755); err != nil {
				t.Fatalf("chmod %s: %v", d, err)
			}
		}
	}
	return dir
}

const resultPrefix = "TESTSVC_RESULT "

// PrintResult reports s to the RunProcesses that started this process.
func PrintResult(s Service) {
	b, _ := json.Marshal(s)
	fmt.Println(resultPrefix + string(b))
}
