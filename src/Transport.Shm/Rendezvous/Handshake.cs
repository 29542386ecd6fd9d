using System.Buffers.Binary;
using System.Net.Sockets;
using System.Text;
using Microsoft.Win32.SafeHandles;
using XCall.Transport.Shm.Interop;
using XCall.Transport.Shm.Lending;

namespace XCall.Transport.Shm.Rendezvous;

/// <summary>
/// The exchange on the rendezvous socket that sets up a connection. Client: hello {magic, version, pid,
/// ring size, flags, probe address, probe value}. Server: 'Y' {ring capacity, flags, probe address, probe value}
/// carrying the segment's descriptor (SCM_RIGHTS), or 'N' {reason} (peer refused), or 'E' {reason} (server-side
/// failure). Client: 'A' {1 if it can read the server's memory, else 0} once it checked and mapped the segment.
/// Afterwards the socket only signals the end of the peer (EOF) and, in portable mode, carries wake-up bytes.
/// The probes tell each side whether the other can read its memory (<see cref="Lending.LendProbe"/>): the
/// server's flags say whether it read the client's probe, the client's acknowledgement whether it read the
/// server's, and each side lends large arrays only to a peer that could (<see cref="ShmOptions.CrossMemoryAttach"/>).
/// </summary>
internal static class Handshake
{
    /// <summary>Wake through socket bytes instead of futexes (requested by either side).</summary>
    public const int FlagPortableWake = 1;

    /// <summary>In the server's reply: the server read the client's probe, so the client may lend it arrays.</summary>
    public const int FlagReadsPeer = 2;

    private const ulong HelloMagic = 0x3148_4D48_534C_4358; // "XCLSHMH1"
    internal const int HelloLength = 40;

    // Magic, version, pid, ring size, flags: the hello of every version so far (3 adds the probe after it).
    private const int FixedHelloLength = 24;

    /// <summary>5: a writer may hold one-way frames in batches (a negative length marks a held head; the reader answers
    /// in the ClaimedHead control word), which a reader of 4 takes for a malformed record; 4: both sides count a heartbeat
    /// in the segment (3 did not); 3: both sides send a memory probe (2 did not lend; 1 sent the path of a file in
    /// /dev/shm).</summary>
    internal const int Version = 5;

    /// <summary>Bytes after the 'Y': ring capacity, flags, probe address, probe value.</summary>
    internal const int AcceptedFieldsLength = 24;

    /// <summary>Bytes of the client's acknowledgement: 'A', whether it read the server's probe.</summary>
    internal const int AcknowledgementLength = 2;

    internal const byte Accepted = (byte)'Y';
    internal const byte Acknowledged = (byte)'A';

    private const int MaxTextLength = 4096;
    private const byte Refused = (byte)'N';
    private const byte Failed = (byte)'E';

    /// <summary>
    /// Server side of the handshake on an accepted socket; null when the peer was refused or went away.
    /// Its waits are bounded by <paramref name="cancellationToken"/> alone (the listener's deadline and
    /// shutdown), which closes the socket. Whatever ends without a channel closes the socket and releases
    /// the segment.
    /// </summary>
    public static ShmChannel? Accept(Socket socket, string name, ShmOptions options, CancellationToken cancellationToken)
    {
        string endpoint = "shm://" + name;
        ShmSegment? segment = null;
        ShmChannel? channel = null;
        CancellationTokenRegistration registration = cancellationToken.UnsafeRegister(static s => ((Socket)s!).Dispose(), socket);
        try
        {
            // Read the hello even from a peer we refuse: closing with unread data would reset the connection
            // and the peer would lose the reason.
            // The fixed part first (what every version sends), so a peer of another version gets its answer.
            Span<byte> hello = stackalloc byte[HelloLength];
            ReceiveExactly(socket, hello[..FixedHelloLength]);
            PeerCredentials? peer = PeerCredentials.Get(socket);
            if (peer is { } refusedPeer && !options.IsAllowed(refusedPeer.Uid))
            {
                SendText(socket, Refused, $"the server does not accept uid {refusedPeer.Uid} (pid {refusedPeer.Pid})");
                return null;
            }
            if (BinaryPrimitives.ReadUInt64LittleEndian(hello) != HelloMagic || BinaryPrimitives.ReadInt32LittleEndian(hello[8..]) != Version)
            {
                SendText(socket, Failed, $"unknown handshake (this server speaks version {Version})");
                return null;
            }
            ReceiveExactly(socket, hello[FixedHelloLength..]);
            int ringSize = BinaryPrimitives.ReadInt32LittleEndian(hello[16..]);
            int flags = BinaryPrimitives.ReadInt32LittleEndian(hello[20..]);
            if (!IsRingSize(ringSize))
            {
                SendText(socket, Failed, $"ring size {ringSize} is not a power of two between {ShmOptions.MinRingSize} and {ShmOptions.MaxRingSize}");
                return null;
            }
            int capacity = Math.Max(ringSize, options.RingSize);
            bool readsClient = ReadsProbe(hello[24..], peer, options);
            bool portable = (flags & FlagPortableWake) != 0 || options.ForcePortableWake || !Futex.IsSupported;

            SafeFileHandle memory;
            try
            {
                segment = ShmSegment.Create(name, capacity, out memory);
            }
            catch (Exception ex) when (ex is IOException or UnauthorizedAccessException or PlatformNotSupportedException)
            {
                SendText(socket, Failed, $"the server could not create a shared-memory segment: {ex.Message}");
                return null;
            }
            using (memory)
            {
                options.SegmentCreated?.Invoke(memory);
                Span<byte> reply = stackalloc byte[1 + AcceptedFieldsLength];
                reply[0] = Accepted;
                BinaryPrimitives.WriteInt32LittleEndian(reply[1..], capacity);
                BinaryPrimitives.WriteInt32LittleEndian(reply[5..], (portable ? FlagPortableWake : 0) | (readsClient ? FlagReadsPeer : 0));
                WriteProbe(reply[9..], options);
                DescriptorPassing.Send(socket, reply, memory);
            }

            Span<byte> ack = stackalloc byte[AcknowledgementLength];
            ReceiveExactly(socket, ack);
            registration.Dispose(); // waits for a deadline that is firing: past this line the socket is ours
            if (ack[0] != Acknowledged || cancellationToken.IsCancellationRequested)
            {
                return null;
            }
            var lending = new LendTerms(peer?.Pid ?? 0, PeerReadsUs: ack[1] == 1, WeReadPeer: readsClient);
            channel = new ShmChannel(segment, socket, isServer: true, options, endpoint, portable, lending);
            return channel;
        }
        catch (Exception ex) when (ex is SocketException or IOException or ObjectDisposedException)
        {
            return null;
        }
        finally
        {
            if (channel is null)
            {
                registration.Dispose();
                segment?.Dispose();
                socket.Dispose();
            }
        }
    }

    /// <summary>Client side: connects to <paramref name="name"/>, checks the server, maps the segment.</summary>
    public static ShmChannel Connect(string name, ShmOptions options, CancellationToken cancellationToken)
    {
        string endpoint = "shm://" + name;
        string socketPath = RuntimeDirectory.SocketPath(options, name);
        var socket = new Socket(AddressFamily.Unix, SocketType.Stream, ProtocolType.Unspecified);
        ShmSegment? segment = null;
        SafeFileHandle? memory = null;
        using CancellationTokenRegistration registration = cancellationToken.UnsafeRegister(static s => ((Socket)s!).Dispose(), socket);
        try
        {
            cancellationToken.ThrowIfCancellationRequested();
            try
            {
                socket.Connect(new UnixDomainSocketEndPoint(socketPath));
            }
            catch (SocketException ex) when (ex.SocketErrorCode == SocketError.AccessDenied)
            {
                throw new ShmPeerRefusedException(endpoint, $"cannot reach {socketPath}: permission denied (the runtime directory and socket are private to their owner)");
            }
            catch (SocketException ex) when (!cancellationToken.IsCancellationRequested)
            {
                throw new XCallDisconnectedException(endpoint, $"no server is listening at {socketPath} ({ex.SocketErrorCode})", ex);
            }
            SetTimeouts(socket, options.ConnectTimeoutMilliseconds);

            PeerCredentials? server = PeerCredentials.Get(socket);
            if (server is { } p && !options.IsAllowed(p.Uid))
            {
                throw new ShmPeerRefusedException(endpoint, $"the server runs as uid {p.Uid}, which this side does not allow (add it to ShmOptions.AllowedUids)");
            }

            Span<byte> hello = stackalloc byte[HelloLength];
            WriteHello(hello, options.RingSize, options.ForcePortableWake || !Futex.IsSupported ? FlagPortableWake : 0, options);
            try
            {
                SendAll(socket, hello);
            }
            catch (SocketException)
            {
                // The server may have answered and closed already (a refusal): read what it said.
            }

            Span<byte> status = stackalloc byte[1];
            if (DescriptorPassing.Receive(socket, status, out memory) == 0)
            {
                throw new EndOfStreamException();
            }
            if (status[0] == Refused)
            {
                throw new ShmPeerRefusedException(endpoint, ReceiveText(socket));
            }
            if (status[0] == Failed)
            {
                throw new XCallDisconnectedException(endpoint, ReceiveText(socket));
            }
            if (status[0] != Accepted)
            {
                throw new XCallDisconnectedException(endpoint, $"unexpected handshake reply 0x{status[0]:x2}");
            }
            Span<byte> fields = stackalloc byte[AcceptedFieldsLength];
            ReceiveExactly(socket, fields);
            int capacity = BinaryPrimitives.ReadInt32LittleEndian(fields);
            int flags = BinaryPrimitives.ReadInt32LittleEndian(fields[4..]);
            if (!IsRingSize(capacity))
            {
                throw new XCallDisconnectedException(endpoint, "malformed handshake reply");
            }
            if (memory is null)
            {
                throw new XCallDisconnectedException(endpoint, "the server accepted but sent no shared-memory segment");
            }
            try
            {
                segment = ShmSegment.Open(memory, capacity);
            }
            catch (Exception ex) when (ex is IOException or InvalidDataException or UnauthorizedAccessException)
            {
                throw new XCallDisconnectedException(endpoint, $"cannot map the server's segment: {ex.Message}", ex);
            }
            memory.Dispose(); // the mapping stays
            bool readsServer = ReadsProbe(fields[8..], server, options);
            // From here the socket belongs to the channel: a cancellation must not dispose it under that.
            registration.Dispose();
            cancellationToken.ThrowIfCancellationRequested();
            SendAll(socket, [Acknowledged, readsServer ? (byte)1 : (byte)0]);
            SetTimeouts(socket, 0);
            var lending = new LendTerms(server?.Pid ?? 0, PeerReadsUs: (flags & FlagReadsPeer) != 0, WeReadPeer: readsServer);
            return new ShmChannel(segment, socket, isServer: false, options, endpoint, (flags & FlagPortableWake) != 0, lending);
        }
        catch (Exception ex)
        {
            memory?.Dispose();
            segment?.Dispose();
            socket.Dispose();
            if (cancellationToken.IsCancellationRequested && ex is not OperationCanceledException)
            {
                throw new OperationCanceledException("Connecting was cancelled.", ex, cancellationToken);
            }
            Exception? translated = ex switch
            {
                SocketException { SocketErrorCode: SocketError.TimedOut or SocketError.WouldBlock } se =>
                    new XCallDisconnectedException(endpoint, $"the handshake did not complete within {options.ConnectTimeout.TotalMilliseconds:0} ms", se),
                SocketException se => new XCallDisconnectedException(endpoint, $"the handshake failed ({se.SocketErrorCode})", se),
                EndOfStreamException eos => new XCallDisconnectedException(endpoint, "the server closed the connection during the handshake", eos),
                IOException io => new XCallDisconnectedException(endpoint, $"the handshake failed: {io.Message}", io),
                _ => null,
            };
            if (translated is null)
            {
                throw;
            }
            throw translated;
        }
    }

    /// <summary>The client's hello: magic, version, pid, ring size, flags, probe (none without <paramref name="options"/>).</summary>
    internal static void WriteHello(Span<byte> hello, int ringSize, int flags, ShmOptions? options = null)
    {
        BinaryPrimitives.WriteUInt64LittleEndian(hello, HelloMagic);
        BinaryPrimitives.WriteInt32LittleEndian(hello[8..], Version);
        BinaryPrimitives.WriteInt32LittleEndian(hello[12..], Environment.ProcessId);
        BinaryPrimitives.WriteInt32LittleEndian(hello[16..], ringSize);
        BinaryPrimitives.WriteInt32LittleEndian(hello[20..], flags);
        WriteProbe(hello[24..], options);
    }

    /// <summary>This process's probe address and value, or zeros when it lends nothing.</summary>
    private static void WriteProbe(Span<byte> fields, ShmOptions? options)
    {
        bool offer = options is { CrossMemoryAttach: true } && OperatingSystem.IsLinux();
        BinaryPrimitives.WriteUInt64LittleEndian(fields, offer ? LendProbe.Address : 0);
        BinaryPrimitives.WriteUInt64LittleEndian(fields[8..], offer ? LendProbe.Value : 0);
    }

    /// <summary>Whether this side, lending allowed, reads the probe the peer wrote in <paramref name="fields"/> (see <see cref="WriteProbe"/>).</summary>
    private static bool ReadsProbe(ReadOnlySpan<byte> fields, PeerCredentials? peer, ShmOptions options) =>
        options.CrossMemoryAttach && peer is { } prober
        && LendProbe.CanRead(prober.Pid, BinaryPrimitives.ReadUInt64LittleEndian(fields), BinaryPrimitives.ReadUInt64LittleEndian(fields[8..]));

    private static bool IsRingSize(int size) => size >= ShmOptions.MinRingSize && size <= ShmOptions.MaxRingSize && (size & (size - 1)) == 0;

    private static void SetTimeouts(Socket socket, int milliseconds)
    {
        int value = milliseconds < 0 ? 0 : milliseconds;
        socket.ReceiveTimeout = value;
        socket.SendTimeout = value;
    }

    private static void SendText(Socket socket, byte status, string text)
    {
        try
        {
            byte[] bytes = Encoding.UTF8.GetBytes(text.Length > 1000 ? text[..1000] : text);
            byte[] message = new byte[5 + bytes.Length];
            message[0] = status;
            BinaryPrimitives.WriteInt32LittleEndian(message.AsSpan(1), bytes.Length);
            bytes.CopyTo(message, 5);
            SendAll(socket, message);
        }
        catch (SocketException)
        {
            // The peer is gone; it gets no reason.
        }
    }

    private static string ReceiveText(Socket socket)
    {
        Span<byte> lengthBytes = stackalloc byte[4];
        ReceiveExactly(socket, lengthBytes);
        int length = BinaryPrimitives.ReadInt32LittleEndian(lengthBytes);
        if (length < 0 || length > MaxTextLength)
        {
            return "(malformed reason)";
        }
        byte[] text = new byte[length];
        ReceiveExactly(socket, text);
        return Encoding.UTF8.GetString(text);
    }

    private static void SendAll(Socket socket, ReadOnlySpan<byte> data)
    {
        while (!data.IsEmpty)
        {
            data = data[socket.Send(data)..];
        }
    }

    internal static void ReceiveExactly(Socket socket, Span<byte> buffer)
    {
        while (!buffer.IsEmpty)
        {
            int n = socket.Receive(buffer);
            if (n == 0)
            {
                throw new EndOfStreamException();
            }
            buffer = buffer[n..];
        }
    }
}
