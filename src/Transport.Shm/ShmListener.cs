using System.Net.Sockets;
using XCall.Transport.Shm.Rendezvous;

namespace XCall.Transport.Shm;

/// <summary>
/// A server's rendezvous socket for one name. Each accepted connection gets its own segment and channel;
/// peers of a user id that is not allowed are refused before anything is created for them.
/// </summary>
public sealed class ShmListener : IDisposable
{
    private readonly Socket _socket;
    private readonly ShmOptions _options;
    private readonly string _socketPath;
    private int _disposed;

    private ShmListener(string name, ShmOptions options, Socket socket, string socketPath)
    {
        Name = name;
        _options = options;
        _socket = socket;
        _socketPath = socketPath;
    }

    /// <summary>The name served: clients connect to <c>shm://Name</c>.</summary>
    public string Name { get; }

    /// <summary>The path of the rendezvous socket.</summary>
    public string SocketPath => _socketPath;

    /// <summary>Waits for the next client and sets up its connection. Clients that are refused or give up
    /// during the handshake are skipped.</summary>
    /// <exception cref="ObjectDisposedException">The listener was disposed.</exception>
    public FrameChannel Accept()
    {
        while (true)
        {
            Socket client;
            try
            {
                client = _socket.Accept();
            }
            catch (SocketException) when (Volatile.Read(ref _disposed) != 0)
            {
                throw new ObjectDisposedException(nameof(ShmListener));
            }
            if (Handshake.Accept(client, Name, _options) is { } channel)
            {
                return channel;
            }
        }
    }

    /// <summary>Waits asynchronously for the next client and sets up its connection.</summary>
    /// <exception cref="ObjectDisposedException">The listener was disposed.</exception>
    /// <exception cref="OperationCanceledException"><paramref name="ct"/> was cancelled.</exception>
    public async ValueTask<FrameChannel> AcceptAsync(CancellationToken ct = default)
    {
        while (true)
        {
            Socket client;
            try
            {
                client = await _socket.AcceptAsync(ct).ConfigureAwait(false);
            }
            catch (SocketException) when (Volatile.Read(ref _disposed) != 0)
            {
                throw new ObjectDisposedException(nameof(ShmListener));
            }
            if (Handshake.Accept(client, Name, _options) is { } channel)
            {
                return channel;
            }
        }
    }

    /// <summary>Stops listening and removes the socket file. Connections already accepted stay open.</summary>
    public void Dispose()
    {
        if (Interlocked.Exchange(ref _disposed, 1) != 0)
        {
            return;
        }
        _socket.Dispose();
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
