using System.Diagnostics;
using System.Globalization;
using XCall.Transport.Shm.Interop;
using XCall.Transport.Shm.TestHost;
using XCall.Transport.Shm.Tests.Support;

namespace XCall.Transport.Shm.Tests;

/// <summary>Two real processes: the test and XCall.Transport.Shm.TestHost children.</summary>
public sealed class CrossProcessTests(ITestOutputHelper output) : IDisposable
{
    private readonly TestDirectory _dir = new();

    public void Dispose() => _dir.Dispose();

    private string[] Args(string mode, string name, params string[] more) =>
        [mode, name, .. more, "--dir", _dir.Path];

    private async Task<HostProcess> StartServerAsync(string name, ShmIdleStrategy strategy = ShmIdleStrategy.Adaptive)
    {
        HostProcess server = HostProcess.Start(output, "server", Args("server", name, "--strategy", strategy.ToString()));
        await server.WaitForLineAsync("READY");
        return server;
    }

    [Theory]
    [InlineData(ShmIdleStrategy.Adaptive)]
    [InlineData(ShmIdleStrategy.BusySpin)]
    [InlineData(ShmIdleStrategy.Blocking)]
    public async Task Echo_round_trips_cross_process(ShmIdleStrategy strategy)
    {
        using HostProcess server = await StartServerAsync("echo", strategy);
        using (FrameChannel channel = ShmTransport.Connect("echo", _dir.Options(strategy)))
        using (var client = new EchoClient(channel))
        {
            var random = new Random(11);
            // BusySpin on a loaded two-core machine is slow by nature (spinners get preempted): fewer rounds.
            int rounds = strategy == ShmIdleStrategy.BusySpin ? 1000 : 5000;
            for (int i = 0; i < rounds; i++)
            {
                byte[] payload = new byte[random.Next(0, 8000)];
                random.NextBytes(payload);
                Assert.Equal(payload, client.RoundTrip(payload));
            }
        }
        Assert.Equal("CLOSED", await server.WaitForLineAsync("CLOSED")); // an orderly close on the far side
        Assert.Empty(ShmFiles.Of(server.Pid));
        Assert.Empty(ShmFiles.Of(Environment.ProcessId));
    }

    [Fact]
    public async Task Sixteen_threads_share_one_connection_and_every_reply_is_their_own()
    {
        const int Threads = 16;
        const int Calls = 20_000;
        using HostProcess server = await StartServerAsync("sixteen");
        using FrameChannel channel = ShmTransport.Connect("sixteen", _dir.Options());
        using var client = new EchoClient(channel);
        var watch = Stopwatch.StartNew();
        await Task.WhenAll(Enumerable.Range(0, Threads).Select(t => Task.Factory.StartNew(() =>
        {
            byte[] payload = new byte[16 + t * 8];
            byte[] reply = new byte[payload.Length];
            for (int i = 0; i < Calls; i++)
            {
                Patterns.Fill(payload, i, t);
                client.RoundTrip(payload, reply);
                if (Patterns.FirstMismatch(reply, i, t) >= 0)
                {
                    throw new InvalidDataException($"thread {t} call {i} got someone else's reply");
                }
            }
        }, TaskCreationOptions.LongRunning)));
        output.WriteLine($"{Threads} x {Calls} round trips in {watch.Elapsed.TotalSeconds:0.00} s");
    }

    [Fact]
    public async Task A_pending_call_fails_soon_after_the_server_is_killed()
    {
        using HostProcess server = await StartServerAsync("victim");
        using FrameChannel channel = ShmTransport.Connect("victim", _dir.Options());
        using var client = new EchoClient(channel);
        Assert.Equal([1], client.RoundTrip([1]));

        Task call = Task.Run(() => client.RoundTrip([2], EchoHandler.HangMethod));
        await server.WaitForLineAsync("IN CALL");
        long killed = Stopwatch.GetTimestamp();
        server.Kill();
        var ex = await Assert.ThrowsAsync<XCallDisconnectedException>(() => call.WaitAsync(TimeSpan.FromSeconds(5)));
        output.WriteLine($"the pending call failed {Stopwatch.GetElapsedTime(killed).TotalMilliseconds:0.0} ms after kill -9: {ex.Message}");
        Assert.Contains("shm://victim", ex.Message);

        await server.WaitForExitAsync();
        Assert.Empty(ShmFiles.Of(server.Pid));
        Assert.Throws<XCallDisconnectedException>(() => client.RoundTrip([3]));
    }

    [Fact]
    public async Task A_stopped_server_is_taken_for_dead_by_its_heartbeat_and_serves_again_once_resumed()
    {
        // SIGSTOP keeps the server's socket open: only the heartbeat in the segment can tell.
        using HostProcess server = await StartServerAsync("frozen");
        using FrameChannel channel = ShmTransport.Connect("frozen", _dir.Options() with { HeartbeatTimeout = TimeSpan.FromSeconds(1) });
        using var client = new EchoClient(channel);
        Assert.Equal([1], client.RoundTrip([1]));
        Signal(server.Pid, "STOP");
        try
        {
            // kill(1) returns once the signal is sent; a thread spinning on another CPU stops a moment later, and
            // could still answer the call below. The call is made once every thread of the server is stopped.
            WaitUntilStopped(server.Pid);
            long stopped = Stopwatch.GetTimestamp();
            var ex = await Assert.ThrowsAsync<XCallDisconnectedException>(() => Task.Run(() => client.RoundTrip([2])).WaitAsync(TimeSpan.FromSeconds(60)));
            output.WriteLine($"the call failed {Stopwatch.GetElapsedTime(stopped).TotalMilliseconds:0} ms after SIGSTOP: {ex.Message}");
            Assert.Contains("shm://frozen", ex.Message);
            Assert.Contains("heartbeat", ex.Message);
        }
        finally
        {
            Signal(server.Pid, "CONT");
        }
        Assert.Contains(nameof(XCallDisconnectedException), await server.WaitForLineAsync("CLOSED"));
        using FrameChannel again = ShmTransport.Connect("frozen", _dir.Options());
        using var resumed = new EchoClient(again);
        Assert.Equal([3], resumed.RoundTrip([3]));
    }

    [Fact]
    public async Task A_server_busy_in_a_call_keeps_beating()
    {
        // The call gets no reply for three heartbeat timeouts: it times out, the connection stays.
        using HostProcess server = await StartServerAsync("busy");
        using FrameChannel channel = ShmTransport.Connect("busy", _dir.Options() with { HeartbeatTimeout = TimeSpan.FromSeconds(1) });
        using var client = new EchoClient(channel, new ConnectionOptions { CallTimeout = TimeSpan.FromSeconds(3) });
        Assert.Throws<XCallTimeoutException>(() => client.RoundTrip([1], EchoHandler.HangMethod));
        Assert.Equal([2], client.RoundTrip([2]));
    }

    [Fact]
    public async Task A_server_takes_a_stopped_client_for_dead_and_serves_the_others()
    {
        HostProcess server = HostProcess.Start(output, "server", Args("server", "watchful", "--heartbeat", "1000"));
        using (server)
        {
            await server.WaitForLineAsync("READY");
            using (HostProcess holder = HostProcess.Start(output, "client", Args("hold", "watchful")))
            {
                await holder.WaitForLineAsync("CONNECTED");
                Signal(holder.Pid, "STOP");
                try
                {
                    string closed = await server.WaitForLineAsync("CLOSED");
                    Assert.Contains(nameof(XCallDisconnectedException), closed);
                    Assert.Contains("heartbeat", closed);
                }
                finally
                {
                    Signal(holder.Pid, "CONT");
                    holder.Kill();
                }
            }
            using FrameChannel channel = ShmTransport.Connect("watchful", _dir.Options());
            using var client = new EchoClient(channel);
            Assert.Equal([4], client.RoundTrip([4]));
        }
    }

    [Fact]
    public async Task A_server_ended_by_SIGTERM_removes_its_socket_file()
    {
        using HostProcess server = HostProcess.Start(output, "server", Args("server", "terminated"));
        await server.WaitForLineAsync("READY");
        string socket = Path.Combine(_dir.Path, "terminated.sock");
        Assert.True(File.Exists(socket), $"no {socket} while the server runs");
        Signal(server.Pid, "TERM"); // the server waits on its standard input, its listener not disposed
        await server.WaitForExitAsync();
        Assert.False(File.Exists(socket), $"{socket} is left behind");
    }

    /// <summary>Sends <paramref name="signal"/> (STOP, CONT, TERM) to <paramref name="pid"/> with kill(1).</summary>
    /// <summary>Returns once /proc says every thread of process <paramref name="pid"/> is stopped ('T'); fails after 30 s.</summary>
    private static void WaitUntilStopped(int pid)
    {
        var clock = Stopwatch.StartNew();
        while (clock.Elapsed < TimeSpan.FromSeconds(30))
        {
            bool allStopped = true;
            foreach (string task in Directory.GetDirectories($"/proc/{pid}/task"))
            {
                string stat;
                try
                {
                    stat = File.ReadAllText(Path.Combine(task, "stat"));
                }
                catch (IOException)
                {
                    continue; // a thread that ended meanwhile
                }
                // "tid (comm) S ...": the state follows the last ')'.
                int close = stat.LastIndexOf(')');
                if (close < 0 || close + 2 >= stat.Length || stat[close + 2] != 'T')
                {
                    allStopped = false;
                    break;
                }
            }
            if (allStopped)
            {
                return;
            }
            Thread.Yield();
        }
        Assert.Fail($"process {pid} was not stopped 30 s after SIGSTOP");
    }

    private static void Signal(int pid, string signal)
    {
        using var kill = Process.Start(new ProcessStartInfo("kill", $"-{signal} {pid}") { UseShellExecute = false })!;
        kill.WaitForExit();
        Assert.Equal(0, kill.ExitCode);
    }

    [Fact]
    public async Task The_server_keeps_serving_when_a_client_is_killed()
    {
        using HostProcess server = await StartServerAsync("survivor");
        using (HostProcess holder = HostProcess.Start(output, "client", Args("hold", "survivor")))
        {
            await holder.WaitForLineAsync("CONNECTED");
            holder.Kill();
            await holder.WaitForExitAsync();
            string closed = await server.WaitForLineAsync("CLOSED");
            Assert.Contains(nameof(XCallDisconnectedException), closed);
            Assert.Empty(ShmFiles.Of(holder.Pid));
        }

        using (FrameChannel channel = ShmTransport.Connect("survivor", _dir.Options()))
        using (var client = new EchoClient(channel))
        {
            for (int i = 0; i < 100; i++)
            {
                byte[] payload = Patterns.Make(100 + i, i);
                Assert.Equal(payload, client.RoundTrip(payload));
            }
        }
        Assert.Empty(ShmFiles.Of(server.Pid));
    }

    [Fact]
    public async Task The_socket_left_by_a_killed_server_is_replaced_by_the_next_server()
    {
        string socketPath = Path.Combine(_dir.Path, "phoenix.sock");
        using (HostProcess first = await StartServerAsync("phoenix"))
        {
            first.Kill();
            await first.WaitForExitAsync();
        }
        Assert.True(File.Exists(socketPath), "a killed server leaves its socket file");

        ShmOptions options = _dir.Options();
        using ShmListener listener = ShmTransport.Listen("phoenix", options);
        Task<FrameChannel> accept = Task.Run(listener.Accept);
        using FrameChannel channel = ShmTransport.Connect("phoenix", options);
        using FrameChannel server = await accept;
        server.Start(new EchoHandler(server));
        using var client = new EchoClient(channel);
        Assert.Equal([7], client.RoundTrip([7]));
    }

    [SkippableFact]
    public async Task A_peer_of_another_uid_is_refused_unless_allowed()
    {
        // Starting a process as another user needs root and setpriv (util-linux).
        Skip.If(Libc.EffectiveUid != 0 || !File.Exists("/usr/bin/setpriv"),
            $"needs root and /usr/bin/setpriv to start a client as uid 65534 (euid {Libc.EffectiveUid})");
        // nobody (65534), keeping only the right to pass directory permissions: it reaches the socket in
        // our private runtime directory, so it is the SO_PEERCRED check that must stop it.
        string[] asNobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--inh-caps=+dac_override", "--ambient-caps=+dac_override", "env", "HOME=/tmp"];
        string[] asPlainNobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "env", "HOME=/tmp"];

        using (ShmListener listener = ShmTransport.Listen("guarded", _dir.Options()))
        {
            Task<FrameChannel> accepting = Task.Run(listener.Accept);

            using (HostProcess refused = HostProcess.Start(output, "nobody", Args("client", "guarded", "10", "--allow", "0"), asNobody))
            {
                string line = await refused.WaitForLineAsync("REFUSED");
                Assert.Contains("uid 65534", line);
                Assert.Equal(3, await refused.WaitForExitAsync());
            }
            using (HostProcess outside = HostProcess.Start(output, "plain-nobody", Args("client", "guarded", "10", "--allow", "0"), asPlainNobody))
            {
                Assert.Contains("permission denied", await outside.WaitForLineAsync("REFUSED"));
            }
            Assert.False(accepting.IsCompleted, "no connection may come out of a refused peer");
            listener.Dispose();
            await Assert.ThrowsAsync<ObjectDisposedException>(() => accepting);
        }

        using (ShmListener listener = ShmTransport.Listen("open", _dir.Options() with { AllowedUids = [65534] }))
        {
            Task<FrameChannel> accepting = Task.Run(() =>
            {
                FrameChannel channel = listener.Accept();
                channel.Start(new EchoHandler(channel));
                return channel;
            });
            using (HostProcess allowed = HostProcess.Start(output, "nobody", Args("client", "open", "50", "--allow", "0"), asNobody))
            {
                await allowed.WaitForLineAsync("OK 50");
                Assert.Equal(0, await allowed.WaitForExitAsync());
            }
            (await accepting).Dispose();

            // The client checks the server too: without --allow 0 it refuses a root server.
            using HostProcess picky = HostProcess.Start(output, "nobody", Args("client", "open", "1"), asNobody);
            Assert.Contains("runs as uid 0", await picky.WaitForLineAsync("REFUSED"));
        }
    }

    [Theory]
    [InlineData(ShmIdleStrategy.Adaptive)]
    [InlineData(ShmIdleStrategy.Blocking)]
    public async Task An_idle_connection_sleeps_on_both_sides(ShmIdleStrategy strategy)
    {
        using HostProcess server = await StartServerAsync("idle", strategy);
        using HostProcess holder = HostProcess.Start(output, "client", Args("hold", "idle", "--strategy", strategy.ToString()));
        await holder.WaitForLineAsync("CONNECTED");
        await Task.Delay(1000); // let start-up work (JIT tiering) settle; this measures a state, not a speed

        const double Window = 2.0;
        long server0 = CpuTicks(server.Pid), holder0 = CpuTicks(holder.Pid);
        await Task.Delay(TimeSpan.FromSeconds(Window));
        double serverShare = (CpuTicks(server.Pid) - server0) / 100.0 / Window;
        double holderShare = (CpuTicks(holder.Pid) - holder0) / 100.0 / Window;
        output.WriteLine($"{strategy}: idle CPU over {Window} s: server {serverShare:P1}, client {holderShare:P1} of a core");
        // A polling loop would show tens of percent; a sleeping connection shows 0 (ticks are 10 ms).
        Assert.True(serverShare < 0.05, $"server uses {serverShare:P1} of a core while idle");
        Assert.True(holderShare < 0.05, $"client uses {holderShare:P1} of a core while idle");
    }

    private static long CpuTicks(int pid)
    {
        string stat = File.ReadAllText($"/proc/{pid}/stat");
        string[] fields = stat[(stat.LastIndexOf(')') + 2)..].Split(' ');
        return long.Parse(fields[11], CultureInfo.InvariantCulture) + long.Parse(fields[12], CultureInfo.InvariantCulture);
    }
}
