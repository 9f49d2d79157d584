package testsvc

import (
	"context"
	"errors"
	"os"
)

// Stop stops the private services of o.Dir that run started, or every one when run is "". It
// returns a line per service it stopped or left running; none when nothing of ours runs.
func Stop(ctx context.Context, o Options, run string) ([]string, error) {
	if _, err := os.Stat(o.Dir); errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	var lines []string
	var errs []error
	for _, stop := range []func(context.Context, Options, string) (string, error){stopPostgres, stopRedis} {
		line, err := stop(ctx, o, run)
		if line != "" {
			lines = append(lines, line)
		}
		errs = append(errs, err)
	}
	return lines, errors.Join(errs...)
}
