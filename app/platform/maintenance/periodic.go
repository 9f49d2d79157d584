package maintenance

import (
	"context"
	"time"

	"github.com/riverqueue/river"
)

// Every is a periodic job as every maintenance job (the purges, the sweeps) is registered:
// args enqueued every interval by river's leader and once at start, the job's kind its id.
func Every(interval time.Duration, args river.JobArgs) *river.PeriodicJob {
	return river.NewPeriodicJob(river.PeriodicInterval(interval),
		func() (river.JobArgs, *river.InsertOpts) { return args, nil },
		&river.PeriodicJobOpts{RunOnStart: true, ID: args.Kind()})
}

// Worker runs a maintenance job: Run once per job (the job's arguments only name it).
type Worker[A river.JobArgs] struct {
	river.WorkerDefaults[A]
	Run func(context.Context) error
}

// Work runs the job once.
func (w *Worker[A]) Work(ctx context.Context, _ *river.Job[A]) error { return w.Run(ctx) }
