package emails

import "github.com/riverqueue/river"

func (m *Module) addSyncWorkers(w *river.Workers) {}

func (m *Module) syncPeriodicJobs() []*river.PeriodicJob { return nil }
