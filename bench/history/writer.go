package history

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/klauspost/compress/gzip"
)

// Writer streams a run's events to a file. Each worker appends to a buffer
// of its own, with no lock and no disk access; a full buffer goes over a
// channel to one writer goroutine, which encodes and compresses it and hands
// it back empty. Memory is bounded by the buffers made at the start: should
// the writer fall behind by all the spare buffers, a worker waits for one,
// and the wait is counted (Trailer.StalledNS) rather than hidden.
type Writer struct {
	origin    time.Time
	generator int
	bufSize   int
	full      chan []Event
	free      chan []Event
	done      chan error
	stalledNS atomic.Int64
	buffers   []*Buffer

	f      *os.File
	gz     *gzip.Writer
	bw     *bufio.Writer
	events int64
	line   []byte
}

// bufferSizes says how many events each worker buffers and how many spare
// buffers the writer has: about 64k events in all (~7 MB), whatever the
// concurrency, with at least 32 events per buffer.
func bufferSizes(workers int) (perBuffer, spares int) {
	perBuffer = min(1024, max(32, 32768/max(1, workers)))
	return perBuffer, workers + 8
}

// Create opens path and writes h as its first line; workers is how many
// buffers to make (one per worker).
func Create(path string, h Header, workers int) (*Writer, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	gz, _ := gzip.NewWriterLevel(f, gzip.BestSpeed)
	w := &Writer{origin: h.Origin, generator: h.Generator, f: f, gz: gz, bw: bufio.NewWriterSize(gz, 256<<10), done: make(chan error, 1)}
	h.Schema = Schema
	if err := w.writeJSON(h); err != nil {
		_ = f.Close()
		return nil, err
	}
	per, spares := bufferSizes(workers)
	w.bufSize = per
	w.full = make(chan []Event, workers+spares)
	w.free = make(chan []Event, spares)
	for range spares {
		w.free <- make([]Event, 0, per)
	}
	for i := range workers {
		w.buffers = append(w.buffers, &Buffer{w: w, worker: i, evs: make([]Event, 0, per)})
	}
	go w.drain()
	return w, nil
}

// Since converts t to the history's time base: nanoseconds from the origin.
func (w *Writer) Since(t time.Time) int64 { return int64(t.Sub(w.origin)) }

// Origin is the history's time 0.
func (w *Writer) Origin() time.Time { return w.origin }

// Workers is how many worker buffers the writer has.
func (w *Writer) Workers() int { return len(w.buffers) }

// Buffer returns worker i's buffer.
func (w *Writer) Buffer(i int) *Buffer { return w.buffers[i] }

// drain encodes full buffers until the channel closes.
func (w *Writer) drain() {
	var err error
	for evs := range w.full {
		for i := range evs {
			if err == nil {
				err = w.writeEvent(&evs[i])
			}
		}
		clear(evs)
		select {
		case w.free <- evs[:0]:
		default:
			// A buffer flushed at Close has no worker waiting for it.
		}
	}
	w.done <- err
}

// Close flushes every buffer, then writes the faults and the trailer. Call
// it once the workers have stopped.
func (w *Writer) Close(faults []Fault, t Trailer) error {
	for _, b := range w.buffers {
		if len(b.evs) > 0 {
			w.full <- b.evs
			b.evs = nil
		}
	}
	close(w.full)
	err := <-w.done
	for _, f := range faults {
		err = errors.Join(err, w.writeJSON(f))
	}
	t.Events = w.events
	t.StalledNS = w.stalledNS.Load()
	err = errors.Join(err, w.writeJSON(struct {
		End bool `json:"end"`
		Trailer
	}{true, t}))
	err = errors.Join(err, w.bw.Flush(), w.gz.Close(), w.f.Close())
	if err != nil {
		return fmt.Errorf("history %s: %w", w.f.Name(), err)
	}
	return nil
}

// Abort closes the file without a trailer, for a run that could not start.
func (w *Writer) Abort() {
	close(w.full)
	<-w.done
	_ = w.bw.Flush()
	_ = w.gz.Close()
	_ = w.f.Close()
}

func (w *Writer) writeJSON(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("history: %w", err)
	}
	b = append(b, '\n')
	if _, err := w.bw.Write(b); err != nil {
		return fmt.Errorf("history: %w", err)
	}
	return nil
}

// writeEvent encodes one event as a JSON line by hand: the writer goroutine
// keeps up with a run only if it allocates nothing per event.
func (w *Writer) writeEvent(e *Event) error {
	w.events++
	w.line = AppendEvent(w.line[:0], e)
	_, err := w.bw.Write(w.line)
	return err
}

// AppendEvent appends e as one JSON line (with its newline).
func AppendEvent(b []byte, e *Event) []byte {
	b = append(b, `{"g":`...)
	b = strconv.AppendInt(b, int64(e.Generator), 10)
	b = append(b, `,"w":`...)
	b = strconv.AppendInt(b, int64(e.Worker), 10)
	b = append(b, `,"key":`...)
	b = strconv.AppendInt(b, int64(e.Key), 10)
	b = append(b, `,"op":"`...)
	b = append(b, e.Op.String()...)
	b = append(b, `","out":"`...)
	b = append(b, e.Out.String()...)
	b = append(b, `","win":`...)
	b = strconv.AppendBool(b, e.Window)
	b = append(b, `,"call":`...)
	b = strconv.AppendInt(b, e.Call, 10)
	b = append(b, `,"ret":`...)
	b = strconv.AppendInt(b, e.Return, 10)
	if e.Token != "" {
		b = append(b, `,"token":`...)
		b = appendString(b, e.Token)
	}
	if e.Fence != 0 {
		b = append(b, `,"fence":`...)
		b = strconv.AppendInt(b, e.Fence, 10)
	}
	if e.Valid != 0 {
		b = append(b, `,"valid":`...)
		b = strconv.AppendInt(b, e.Valid, 10)
	}
	if e.Op == OpEnter {
		b = append(b, `,"granted":`...)
		b = strconv.AppendInt(b, e.Granted, 10)
	}
	if e.Seq != 0 {
		b = append(b, `,"seq":`...)
		b = strconv.AppendUint(b, e.Seq, 10)
	}
	if e.Err != "" {
		b = append(b, `,"err":`...)
		b = appendString(b, e.Err)
	}
	return append(b, "}\n"...)
}

// appendString quotes s for JSON: tokens and error kinds are plain ASCII,
// anything else goes through encoding/json.
func appendString(b []byte, s string) []byte {
	for i := range len(s) {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s)
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// Buffer is one worker's events on their way to the writer. Only its
// worker touches it.
type Buffer struct {
	w      *Writer
	worker int
	evs    []Event
}

// Add appends e, stamped with the buffer's generator and worker.
func (b *Buffer) Add(e Event) {
	e.Generator, e.Worker = b.w.generator, b.worker
	b.put(e)
}

// put appends e as it is.
func (b *Buffer) put(e Event) {
	b.evs = append(b.evs, e)
	if len(b.evs) == b.w.bufSize {
		b.flush()
	}
}

// Since converts t to the history's time base.
func (b *Buffer) Since(t time.Time) int64 { return int64(t.Sub(b.w.origin)) }

// flush hands the full buffer to the writer and takes an empty one; it
// waits only when every spare buffer is queued.
func (b *Buffer) flush() {
	b.w.full <- b.evs
	select {
	case b.evs = <-b.w.free:
		return
	default:
	}
	start := time.Now()
	b.evs = <-b.w.free
	b.w.stalledNS.Add(int64(time.Since(start)))
}
