package history

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/klauspost/compress/gzip"
)

// Writer streams a run's events to a file. Each worker appends to a buffer
// of its own, with no lock and no disk access; a full buffer goes over a
// channel to one writer goroutine, which encodes it (and gzips it, for a
// .gz file) and hands it back empty. Memory is bounded: buffers are made as
// the writer falls behind, up to about 64k events in all; past that a
// worker waits for one, and the wait is counted (Trailer.StalledNS) rather
// than hidden.
//
// The buffers are small and reused newest first, so the few a run keeps
// cycling stay in the CPU's cache: with 1024-event buffers passed round in
// turn, a run at -c 16 cycled ~5 MB of events (measured here: --history cost
// it 9.7% of its throughput with those, 5.4% with 128-event buffers).
type Writer struct {
	origin    time.Time
	generator int
	bufSize   int
	full      chan []Event
	done      chan error
	stalledNS atomic.Int64
	buffers   []*Buffer

	// mu guards the free list; freed wakes a worker waiting for a buffer.
	mu    sync.Mutex
	freed *sync.Cond
	// free holds the empty buffers, the one freed last at the end: it is
	// the likeliest still in cache.
	free [][]Event
	// made counts the buffers made, workers' own included, up to most.
	made, most int

	f *os.File
	// out buffers what reaches the file: gzip's deflater hands its writer
	// every ~250 bytes of compressed data, a write system call each
	// without out.
	out *bufio.Writer
	// gz compresses the lines on their way to out; nil for a plain file,
	// whose lines go to out as they are.
	gz *gzip.Writer
	// chunk collects encoded lines, handed on chunkSize at a time: events
	// are encoded straight into it, with no copy between.
	chunk  []byte
	events int64
}

// chunkSize is how many bytes of lines go to gzip (or a plain file's
// buffer) at once, after which the writer yields (see compressFull): about
// 100 events' encoding, and gzip compresses each 64 KB it has gathered
// (~0.2 ms here) on the fourth.
const chunkSize = 16 << 10

// inFlight is about how many events the writer's buffers hold at most.
const inFlight = 64 << 10

// bufferSizes says how many events each buffer holds (64, or 32 with over
// 512 workers, to keep their own buffers small) and how many buffers may be
// made: about inFlight events in all, and at least 8 beyond the workers'.
func bufferSizes(workers int) (perBuffer, most int) {
	perBuffer = min(64, max(32, 32768/max(1, workers)))
	return perBuffer, max(workers+8, inFlight/perBuffer)
}

// gzipped reports whether a history written to path is gzip'd: when its
// name ends in .gz, as k6 does for --out json. Any other name gets plain
// JSON lines, which cost the run less CPU and take ~7× the disk.
func gzipped(path string) bool { return strings.HasSuffix(path, ".gz") }

// Create opens path and writes h as its first line; workers is how many
// buffers to make (one per worker), recorded in the header. The file is
// gzip'd if its name ends in .gz.
func Create(path string, h Header, workers int) (*Writer, error) {
	h.Workers = workers
	return create(path, h, workers)
}

// create is Create with the header as given.
func create(path string, h Header, workers int) (*Writer, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	out := bufio.NewWriterSize(f, 256<<10)
	w := &Writer{origin: h.Origin, generator: h.Generator, f: f, out: out, chunk: make([]byte, 0, chunkSize+4<<10), done: make(chan error, 1)}
	if gzipped(path) {
		w.gz, _ = gzip.NewWriterLevel(out, gzip.BestSpeed)
	}
	w.freed = sync.NewCond(&w.mu)
	h.Schema = Schema
	if err := w.writeJSON(h); err != nil {
		_ = f.Close()
		return nil, err
	}
	w.bufSize, w.most = bufferSizes(workers)
	// A send on full never waits: it has room for every buffer there can be.
	w.full = make(chan []Event, w.most)
	for i := range workers {
		w.buffers = append(w.buffers, &Buffer{w: w, worker: i, evs: make([]Event, 0, w.bufSize)})
	}
	w.made = workers
	go w.drain()
	return w, nil
}

// take returns an empty buffer: the one freed last, a new one while fewer
// than most were made, or else the next freed, waiting for it (the wait is
// counted in stalledNS).
func (w *Writer) take() []Event {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.free) == 0 && w.made < w.most {
		w.made++
		return make([]Event, 0, w.bufSize)
	}
	if len(w.free) == 0 {
		start := time.Now()
		for len(w.free) == 0 {
			w.freed.Wait()
		}
		w.stalledNS.Add(int64(time.Since(start)))
	}
	evs := w.free[len(w.free)-1]
	w.free = w.free[:len(w.free)-1]
	return evs
}

// give puts an emptied buffer back on the free list.
func (w *Writer) give(evs []Event) {
	w.mu.Lock()
	w.free = append(w.free, evs[:0])
	w.mu.Unlock()
	w.freed.Signal()
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
		w.give(evs)
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
	if err = errors.Join(err, w.closeFile()); err != nil {
		return fmt.Errorf("history %s: %w", w.f.Name(), err)
	}
	return nil
}

// Abort closes the file without a trailer, for a run that could not start.
func (w *Writer) Abort() {
	close(w.full)
	<-w.done
	_ = w.closeFile()
}

// closeFile hands on the last chunk, ends the gzip stream if the file has
// one, and flushes and closes the file.
func (w *Writer) closeFile() error {
	err := w.compress()
	if w.gz != nil {
		err = errors.Join(err, w.gz.Close())
	}
	return errors.Join(err, w.out.Flush(), w.f.Close())
}

func (w *Writer) writeJSON(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("history: %w", err)
	}
	w.chunk = append(append(w.chunk, b...), '\n')
	return w.compressFull()
}

// writeEvent encodes one event as a JSON line by hand: the writer goroutine
// keeps up with a run only if it allocates nothing per event.
func (w *Writer) writeEvent(e *Event) error {
	w.events++
	w.chunk = AppendEvent(w.chunk, e)
	return w.compressFull()
}

// compressFull hands the chunk to gzip once it holds chunkSize bytes, then
// lets the workers that became ready meanwhile run first: the writer's
// work can wait, a worker's next call is what the run measures, and on a
// host the server shares a worker kept waiting in the run queue is
// throughput lost beyond the CPU the compression takes.
func (w *Writer) compressFull() error {
	if len(w.chunk) < chunkSize {
		return nil
	}
	err := w.compress()
	runtime.Gosched()
	return err
}

// compress hands the chunk to gzip (or the plain file's buffer) and
// empties it. Its error is gzip's or the file's, unwrapped: Close names
// the file, and the drain's error is returned by Close too.
func (w *Writer) compress() error {
	var err error
	if w.gz != nil {
		_, err = w.gz.Write(w.chunk)
	} else {
		_, err = w.out.Write(w.chunk)
	}
	w.chunk = w.chunk[:0]
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

// flush hands the full buffer to the writer and takes an empty one.
func (b *Buffer) flush() {
	b.w.full <- b.evs
	b.evs = b.w.take()
}
