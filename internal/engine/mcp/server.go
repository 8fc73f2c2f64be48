package mcp

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"github.com/astrid-go/astrid/internal/host/proc"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/astrid-go/astrid/manifest"
)

// server is one generation of a running MCP server: the process, its group
// and the client session over its stdin/stdout. A restart makes a new one.
type server struct {
	cmd      *exec.Cmd
	confined func() // the confinement's Done, after Wait
	pid      int
	stdin    *os.File // our end of the server's stdin
	stdout   *os.File // our end of the server's stdout
	stderr   *os.File // our end of the server's stderr
	session  *mcp.ClientSession
	started  time.Time
	// scoped marks the server of a request's workspace (workspace.go),
	// which is not restarted when it dies: the next call starts one.
	scoped bool

	// exited is closed once the direct child has exited and been reaped;
	// exitErr says how it ended. done is cancelled at the same moment, with
	// errServerExited as cause, for calls to merge into their context.
	exited  chan struct{}
	exitErr error
	done    context.Context
	cancel  context.CancelCauseFunc

	closeOnce sync.Once
	logDone   chan struct{} // the stderr reader has finished
}

// next says what follows the server's death, for a caller.
func (s *server) next() string {
	if s.cmd == nil {
		return "the engine is connecting again"
	}
	if s.scoped {
		return "the next call starts it again"
	}
	return "it is being restarted"
}

// errServerExited is the cause carried by a server's done context.
var errServerExited = errors.New("the MCP server exited")

// spawnSpec is what a generation is started from.
type spawnSpec struct {
	name    string // "<capsule>/<server id>", for the log and KillAll
	command string
	args    []string
	dir     string
	env     []string
	log     *slog.Logger
	wire    io.Writer
	timeout time.Duration
	// progress receives the server's progress notifications; counted
	// notes them as they are read (both nil in tests of the protocol
	// layer alone).
	progress func(context.Context, *mcp.ProgressNotificationClientRequest)
	counted  *progressCalls
	// logMessage receives the server's notifications/message (logging.go).
	logMessage func(context.Context, *mcp.LoggingMessageRequest)
	// changed hears the server say its resource or prompt list changed
	// (relist.go); nil: nobody listens.
	changed func(*mcp.ClientSession)
	// sample answers the server's sampling/createMessage (sampling.go).
	//lint:ignore SA1019 sampling is deprecated (SEP-2577) but still works; sampling.go says why we offer it
	sample func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error)
	// roots answer the server's roots/list (roots.go); none: the client
	// does not offer roots.
	//lint:ignore SA1019 roots are deprecated (SEP-2577) but still work; roots.go says why we offer them
	roots []*mcp.Root
	// confine starts the process inside its capsule's grants (the host's
	// one spawning place); nil starts it as it is (tests of the protocol
	// layer alone).
	confine func(cmd *exec.Cmd) (*proc.Confined, error)
}

// startServer starts the process in its own group and connects the client
// session (the MCP handshake runs under ctx and spec.timeout). On failure
// nothing is left running.
func startServer(ctx context.Context, spec spawnSpec) (*server, error) {
	var files []*os.File
	pipe := func() (r, w *os.File, err error) {
		r, w, err = os.Pipe()
		if err == nil {
			files = append(files, r, w)
		}
		return r, w, err
	}
	fail := func(err error) (*server, error) {
		for _, f := range files {
			_ = f.Close()
		}
		return nil, err
	}
	inR, inW, err := pipe()
	if err != nil {
		return fail(fmt.Errorf("stdin pipe: %w", err))
	}
	outR, outW, err := pipe()
	if err != nil {
		return fail(fmt.Errorf("stdout pipe: %w", err))
	}
	errR, errW, err := pipe()
	if err != nil {
		return fail(fmt.Errorf("stderr pipe: %w", err))
	}
	cmd := exec.Command(spec.command, spec.args...)
	cmd.Dir = spec.dir
	cmd.Env = spec.env
	// *os.File ends are handed to the child as they are: no copying
	// goroutines, and Wait does not close our ends under a reader.
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	cmd.SysProcAttr = serverProcAttr()
	start, confined := cmd.Start, func() {}
	if spec.confine != nil {
		cf, err := spec.confine(cmd)
		if err != nil {
			return fail(fmt.Errorf("confine %s: %w", spec.command, err))
		}
		start, confined = cf.Start, cf.Done
	}
	if err := start(); err != nil {
		confined()
		return fail(fmt.Errorf("start %s: %w", spec.command, err))
	}
	for _, f := range []*os.File{inR, outW, errW} {
		_ = f.Close()
	}
	done, cancel := context.WithCancelCause(context.Background())
	s := &server{
		cmd: cmd, confined: confined, pid: cmd.Process.Pid, stdin: inW, stdout: outR, stderr: errR,
		started: time.Now(), exited: make(chan struct{}), done: done, cancel: cancel,
		logDone: make(chan struct{}),
	}
	trackGroup(s.pid, spec.name)
	go s.wait()
	go s.logStderr(spec.log)

	var t mcp.Transport = &mcp.IOTransport{Reader: outR, Writer: inW}
	if spec.counted != nil {
		t = &countingTransport{Transport: t, progress: spec.counted}
	}
	if spec.wire != nil {
		t = &mcp.LoggingTransport{Transport: t, Writer: spec.wire}
	}
	//lint:ignore SA1019 sampling is deprecated (SEP-2577) but still works; sampling.go says why we offer it
	caps := &mcp.ClientCapabilities{Sampling: &mcp.SamplingCapabilities{}}
	if len(spec.roots) > 0 {
		// A fixed list: the grants do not change while the server runs.
		//lint:ignore SA1019 roots are deprecated (SEP-2577) but still work; roots.go says why we offer them
		caps.RootsV2 = &mcp.RootCapabilities{}
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "astrid", Version: manifest.RuntimeVersion}, &mcp.ClientOptions{
		Logger: spec.log,
		// Roots are the capsule's granted directories, and only when it
		// has some; sampling is answered (refused unless the operator
		// allows it for the capsule, sampling.go); no elicitation from a
		// stdio server.
		Capabilities: caps,
		//lint:ignore SA1019 sampling is deprecated (SEP-2577) but still works; sampling.go says why we offer it
		CreateMessageHandler:        spec.sample,
		ProgressNotificationHandler: spec.progress,
		//lint:ignore SA1019 logging is deprecated (SEP-2577) but still works; docs/rationale/mcp.md says why a tool's log messages use it
		LoggingMessageHandler: spec.logMessage,
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			spec.log.Info("the MCP server changed its tool list; the capsule keeps the tools it loaded with until it is reloaded")
		},
		ResourceListChangedHandler: func(_ context.Context, r *mcp.ResourceListChangedRequest) {
			if spec.changed != nil {
				spec.changed(r.Session)
			}
		},
		PromptListChangedHandler: func(_ context.Context, r *mcp.PromptListChangedRequest) {
			if spec.changed != nil {
				spec.changed(r.Session)
			}
		},
	})
	//lint:ignore SA1019 roots are deprecated (SEP-2577) but still work; roots.go says why we offer them
	client.AddRoots(spec.roots...)
	client.AddReceivingMiddleware(rootsInOrder(spec.roots))
	cctx, stop := context.WithTimeout(ctx, spec.timeout)
	defer stop()
	// A server that dies during the handshake must not leave it waiting.
	unwatch := context.AfterFunc(done, stop)
	defer unwatch()
	session, err := client.Connect(cctx, t, nil)
	if err != nil {
		s.kill()
		if context.Cause(done) != nil {
			err = fmt.Errorf("%w (%v)", err, s.exitErr)
		}
		return nil, fmt.Errorf("MCP handshake with %s: %w", spec.command, err)
	}
	s.session = session
	askForLogs(cctx, session, spec.log)
	// A session that breaks while the process lives (garbage on stdout, a
	// closed pipe) leaves a server nobody can talk to: end it, so that the
	// supervisor starts a new one.
	go func() {
		_ = session.Wait()
		_ = signalGroup(s.pid, sigKill)
	}()
	return s, nil
}

// wait reaps the direct child and then the rest of its group: a server
// whose leader died has no business keeping helpers alive.
func (s *server) wait() {
	err := s.cmd.Wait()
	s.confined()
	if err == nil {
		err = errors.New("exited with status 0")
	}
	s.exitErr = err
	_ = signalGroup(s.pid, sigKill)
	s.cancel(fmt.Errorf("%w: %v", errServerExited, err))
	close(s.exited)
}

// logStderr copies the server's stderr into the log, a line at a time.
// Lines longer than the buffer are logged in pieces.
func (s *server) logStderr(log *slog.Logger) {
	defer close(s.logDone)
	r := bufio.NewReaderSize(s.stderr, 4096)
	for {
		line, err := r.ReadSlice('\n')
		if len(line) > 0 {
			if line[len(line)-1] == '\n' {
				line = line[:len(line)-1]
			}
			log.Info("mcp server stderr", "line", string(line))
		}
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			return
		}
	}
}

// stopServer ends the generation: stdin is closed (an MCP server's cue to
// exit), then after grace the group gets SIGTERM, then SIGKILL. It waits
// for the child and the stderr reader, and is idempotent.
func (s *server) stop(grace time.Duration) {
	if s.cmd == nil {
		s.closeRemote()
		return
	}
	s.closeOnce.Do(func() {
		_ = s.stdin.Close()
		if !s.waitExit(grace) {
			_ = signalGroup(s.pid, sigTerm)
			if !s.waitExit(grace) {
				_ = signalGroup(s.pid, sigKill)
				<-s.exited
			}
		}
		s.finish()
	})
}

// kill ends the generation at once (the server is already dead or useless).
func (s *server) kill() {
	if s.cmd == nil {
		s.closeRemote()
		return
	}
	s.closeOnce.Do(func() {
		_ = signalGroup(s.pid, sigKill)
		<-s.exited
		_ = s.stdin.Close()
		s.finish()
	})
}

// finish releases the session and the pipes once the child has exited.
func (s *server) finish() {
	if s.session != nil {
		// With the process gone the reader sees EOF at once, so Close does
		// not wait on a call the server will never answer.
		_ = s.session.Close()
	} else {
		_ = s.stdout.Close()
	}
	// A process that left the group may still hold stderr; do not let it
	// keep the reader (and this call) alive.
	select {
	case <-s.logDone:
	case <-time.After(time.Second):
		_ = s.stderr.Close()
		<-s.logDone
	}
	_ = s.stderr.Close()
	untrackGroup(s.pid)
}

func (s *server) waitExit(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-s.exited:
		return true
	case <-t.C:
		return false
	}
}
