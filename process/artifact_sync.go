package process

import "os"

// syncEvery is how much an artifact grows between two background syncs.
// Writeback alone (startWriteback) does not make the data durable: the
// device's own cache is flushed only by a sync, and a flush costs about as
// much as the data written since the last one. A large artifact synced
// only at its end would keep its Result waiting for all of it; syncing
// while the command still writes leaves the final fsync the last stretch.
// Every 8 MiB left that stretch of a 256 MiB stream 6–11 ms instead of
// about 18, but the more frequent syncs took about a quarter more CPU,
// which a drain sharing two cores with its command cannot spare.
const syncEvery = 32 << 20

// backgroundSync fsyncs one file on a goroutine of its own, on request,
// while the drain keeps writing it. Requests that arrive while a sync runs
// fold into one more sync after it. The goroutine is started by the first
// request and ended by stop, which waits for it; a file that never grows
// past syncEvery never starts one.
type backgroundSync struct {
	f    *os.File
	req  chan struct{} // buffered: one pending request at most
	done chan struct{} // closed when the goroutine has returned
	err  error         // the first failed sync; read after done
}

// request asks for a sync of everything written so far, without waiting.
func (s *backgroundSync) request(f *os.File) {
	if s.req == nil {
		s.f = f
		s.req, s.done = make(chan struct{}, 1), make(chan struct{})
		go s.run()
	}
	select {
	case s.req <- struct{}{}:
	default: // a sync is already pending; it will cover these bytes
	}
}

func (s *backgroundSync) run() {
	defer close(s.done)
	for range s.req {
		// A failed sync is kept for the artifact's result: the kernel
		// reports a writeback error to one sync only, so the final fsync
		// may no longer see it.
		if err := s.f.Sync(); err != nil && s.err == nil {
			s.err = err
		}
	}
}

// stop ends the goroutine, if one was started, after its last sync, and
// returns the first sync failure. The file may be closed after it.
func (s *backgroundSync) stop() error {
	if s.req == nil {
		return nil
	}
	close(s.req)
	<-s.done
	s.req = nil
	return s.err
}
