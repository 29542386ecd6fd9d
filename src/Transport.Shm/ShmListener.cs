using System.Net.Sockets;
using System.Runtime.InteropServices;
using XCall.Transport.Shm.Rendezvous;

namespace XCall.Transport.Shm;

/// <summary>
/// A server's rendezvous socket for one name. Each accepted connection gets its own segment and channel;
/// peers of a user id that is not allowed are refused before anything is created for them. Handshakes run
/// in the background, several at once, each bounded by <see cref="ShmOptions.ConnectTimeout"/>, so a client
/// that connects and stays silent delays no one else; and when all 64 handshake slots are taken, a newcomer
/// takes the slot of a client that has sent nothing, or that has not finished within
/// <see cref="ShmOptions.HandshakeGrace"/>, rather than wait behind it.
/// </summary>
public sealed class ShmListener : IDisposable
{
    private readonly HandshakeQueue<ShmChannel> _queue;
    private readonly string _socketPath;
    private readonly EventHandler _removeAtExit;
    private readonly PosixSignalRegistration[] _removeOnSignal;

    private ShmListener(string name, ShmOptions options, Socket socket, string socketPath)
    {
        Name = name;
        _socketPath = socketPath;
        _queue = new HandshakeQueue<ShmChannel>(
            socket,
            (client, deadline) => Handshake.Accept(client, name, options, deadline),
            new HandshakePolicy(
                options.ConnectTimeout,
                "ShmOptions.ConnectTimeout",
                options.HandshakeGrace,
                "ShmOptions.HandshakeGrace",
                $"xcall shm://{name}",
                client => PeerCredentials.Get(client) is { } peer ? $"shm://{name} (pid {peer.Pid}, uid {peer.Uid})" : $"shm://{name}"));
        _queue.HandshakeFailed += (peer, error) => HandshakeFailed?.Invoke(peer, error);
        // A process that ends without disposing the listener still removes the socket file, so the name is not
        // left behind: on ProcessExit (Environment.Exit, a return from Main past it) and on the signals that end
        // a process by default (the handlers do not cancel them: the process still ends). A process killed
        // outright (SIGKILL) leaves it, and the next server of the name removes it (see Listen).
        _removeAtExit = (_, _) => RemoveSocketFile();
        AppDomain.CurrentDomain.ProcessExit += _removeAtExit;
        _removeOnSignal =
        [
            PosixSignalRegistration.Create(PosixSignal.SIGTERM, _ => RemoveSocketFile()),
            PosixSignalRegistration.Create(PosixSignal.SIGINT, _ => RemoveSocketFile()),
            PosixSignalRegistration.Create(PosixSignal.SIGHUP, _ => RemoveSocketFile()),
        ];
    }

    /// <summary>
    /// Raised, on the thread that ran its handshake, when a client fails its handshake: a fault, its
    /// <see cref="ShmOptions.ConnectTimeout"/>, or its slot given to a newcomer (see
    /// <see cref="ShmOptions.HandshakeGrace"/>), the last two with a <see cref="TimeoutException"/>. The
    /// argument names the client (<c>shm://name (pid P, uid U)</c>). Clients refused for their user id or
    /// their handshake version are told why and not reported, nor are clients that close their end during
    /// the handshake. Exceptions thrown by handlers are ignored.
    /// </summary>
    public event Action<string, Exception>? HandshakeFailed;

    /// <summary>Slots taken: handshakes running and channels not yet accepted (tests).</summary>
    internal int PendingHandshakes => _queue.SlotsTaken;

    /// <summary>The name served: clients connect to <c>shm://Name</c>.</summary>
    public string Name { get; }

    /// <summary>The path of the rendezvous socket.</summary>
    public string SocketPath => _socketPath;

    /// <summary>Waits for the next client that completed its handshake. Clients that are refused, give up
    /// or time out during the handshake are never returned.</summary>
    /// <exception cref="ObjectDisposedException">The listener was disposed.</exception>
    public FrameChannel Accept()
    {
        ValueTask<FrameChannel> next = AcceptAsync();
        return next.IsCompleted ? next.Result : next.AsTask().GetAwaiter().GetResult();
    }

    /// <summary>Waits asynchronously for the next client that completed its handshake.</summary>
    /// <exception cref="ObjectDisposedException">The listener was disposed.</exception>
    /// <exception cref="OperationCanceledException"><paramref name="cancellationToken"/> was cancelled.</exception>
    public async ValueTask<FrameChannel> AcceptAsync(CancellationToken cancellationToken = default)
    {
        try
        {
            return await _queue.AcceptAsync(cancellationToken).ConfigureAwait(false);
        }
        catch (ObjectDisposedException)
        {
            throw new ObjectDisposedException(nameof(ShmListener));
        }
    }

    /// <summary>
    /// Stops listening and removes the socket file. Handshakes under way are ended (their sockets closed,
    /// their segments released) before this returns, and connections not taken by Accept are closed;
    /// connections already accepted stay open.
    /// </summary>
    public void Dispose()
    {
        AppDomain.CurrentDomain.ProcessExit -= _removeAtExit;
        foreach (PosixSignalRegistration registration in _removeOnSignal)
        {
            registration.Dispose();
        }
        _queue.Dispose();
        RemoveSocketFile();
    }

    private void RemoveSocketFile()
    {
        try
        {
            File.Delete(_socketPath);
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
        {
            // Already gone.
        }
    }

    internal static ShmListener Open(string name, ShmOptions options)
    {
        RuntimeDirectory.Ensure(options);
        string path = RuntimeDirectory.SocketPath(options, name);
        var socket = new Socket(AddressFamily.Unix, SocketType.Stream, ProtocolType.Unspecified);
        try
        {
            var endPoint = new UnixDomainSocketEndPoint(path);
            try
            {
                socket.Bind(endPoint);
            }
            catch (SocketException ex) when (ex.SocketErrorCode == SocketError.AddressAlreadyInUse)
            {
                if (IsServed(path))
                {
                    throw new IOException($"shm://{name} is already served (socket {path}).", ex);
                }
                File.Delete(path); // left by a server that died
                socket.Bind(endPoint);
            }
            if (!OperatingSystem.IsWindows())
            {
                // Connecting needs write permission on the socket; the directory (0700) keeps others out anyway.
                File.SetUnixFileMode(path, options.AllowedUids is { Count: > 0 }
                    ? UnixFileMode.UserRead | UnixFileMode.UserWrite | UnixFileMode.GroupRead | UnixFileMode.GroupWrite | UnixFileMode.OtherRead | UnixFileMode.OtherWrite
                    : UnixFileMode.UserRead | UnixFileMode.UserWrite);
            }
            socket.Listen(128);
            return new ShmListener(name, options, socket, path);
        }
        catch
        {
            socket.Dispose();
            throw;
        }
    }

    private static bool IsServed(string path)
    {
        using var probe = new Socket(AddressFamily.Unix, SocketType.Stream, ProtocolType.Unspecified);
        try
        {
            probe.Connect(new UnixDomainSocketEndPoint(path));
            return true;
        }
        catch (SocketException)
        {
            return false;
        }
    }
}
