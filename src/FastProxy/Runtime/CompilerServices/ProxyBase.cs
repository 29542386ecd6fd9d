using System.ComponentModel;

namespace XCall.Runtime.CompilerServices;

/// <summary>
/// Base of the generated proxies that carry calls as frames over a connection. A proxy received by
/// reference (a [Remotable] value) holds the peer's object alive until it is disposed or collected; either
/// sends a Release frame. Disposing any other proxy does nothing.
/// </summary>
[EditorBrowsable(EditorBrowsableState.Never)]
public abstract class ProxyBase : IDisposable
{
    /// <summary>Creates a proxy for object <paramref name="objectId"/> of <paramref name="connection"/>'s peer.</summary>
    protected ProxyBase(XCallConnection connection, ulong objectId, Dispatcher dispatcher)
    {
        Connection = connection;
        ObjectId = objectId;
        Dispatcher = dispatcher;
    }

    /// <summary>The contract's dispatcher, for its name and method names in diagnostics.</summary>
    public Dispatcher Dispatcher { get; }

    /// <summary>The connection the calls travel on.</summary>
    public XCallConnection Connection { get; }

    /// <summary>The remote object's id on that connection.</summary>
    public ulong ObjectId { get; }

    /// <summary>This side's hold on the remote object, when the proxy was received by reference.</summary>
    internal ImportedReference? Reference { get; set; }

    /// <summary>Begins a synchronous call of method <paramref name="methodId"/>: its frame is open for the arguments.</summary>
    /// <exception cref="ObjectDisposedException">The proxy is a reference that was released.</exception>
    /// <exception cref="XCallDisconnectedException">The connection is gone, or the proxy is a reference that came over a lost link.</exception>
    protected PendingCall BeginCall(uint methodId) => Connection.BeginCall(this, methodId);

    /// <summary>
    /// Begins a synchronous call of method <paramref name="methodId"/>, which takes <paramref name="cancellationToken"/>:
    /// its frame is open for the arguments. A token that cannot be cancelled (and no call timeout) tells the server
    /// no cancel frame will follow, so the method gets the token its connection shares among such calls (cancelled
    /// when the link is lost or the connection closes) instead of a source of its own.
    /// </summary>
    /// <exception cref="ObjectDisposedException">The proxy is a reference that was released.</exception>
    /// <exception cref="XCallDisconnectedException">The connection is gone, or the proxy is a reference that came over a lost link.</exception>
    protected PendingCall BeginCall(uint methodId, CancellationToken cancellationToken) =>
        Connection.BeginCall(this, methodId, cancellationToken.CanBeCanceled);

    /// <summary>
    /// Begins an asynchronous call of method <paramref name="methodId"/>; null when the link is down and must be made
    /// again first: the proxy then awaits <see cref="ReconnectAsync"/>, hands its result to <see cref="ContinueCall"/>
    /// and makes the call again, so the caller's thread never waits for a connect.
    /// </summary>
    protected PendingCall? BeginAsyncCall(uint methodId) => Connection.BeginAsyncCall(this, methodId);

    /// <summary>
    /// <see cref="BeginAsyncCall(uint)"/> for a method that takes <paramref name="cancellationToken"/> (see
    /// <see cref="BeginCall(uint, CancellationToken)"/>).
    /// </summary>
    protected PendingCall? BeginAsyncCall(uint methodId, CancellationToken cancellationToken) =>
        Connection.BeginAsyncCall(this, methodId, cancellationToken.CanBeCanceled);

    /// <summary>
    /// <see cref="BeginAsyncCall(uint)"/> for a method marked <see cref="LongWaitAttribute"/>: the call goes out marked
    /// <see cref="Transport.FrameFlags.LongWait"/>, and nothing polls for its reply.
    /// </summary>
    protected PendingCall? BeginLongWaitCall(uint methodId) => Connection.BeginAsyncCall(this, methodId, longWait: true);

    /// <summary>
    /// <see cref="BeginLongWaitCall(uint)"/> for a method that takes <paramref name="cancellationToken"/> (see
    /// <see cref="BeginCall(uint, CancellationToken)"/>).
    /// </summary>
    protected PendingCall? BeginLongWaitCall(uint methodId, CancellationToken cancellationToken) =>
        Connection.BeginAsyncCall(this, methodId, cancellationToken.CanBeCanceled, longWait: true);

    /// <summary>Begins a one-way call of method <paramref name="methodId"/>.</summary>
    protected OneWayCall BeginOneWay(uint methodId) => Connection.BeginOneWay(this, methodId);

    /// <summary>Sends a one-way call of method <paramref name="methodId"/> whose arguments (unmanaged values only) are
    /// written in <paramref name="arguments"/>, in one call into the transport.</summary>
    protected void SendOneWay(uint methodId, ReadOnlySpan<byte> arguments) => Connection.SendOneWay(this, methodId, arguments);

    /// <summary>
    /// Writes the unmanaged <paramref name="value"/> at <paramref name="offset"/> of <paramref name="arguments"/>, the
    /// bytes a <see cref="XCall.Marshal.MarshalWriter"/> writes for it (the block cleared first), for
    /// <see cref="SendOneWay"/>: the generated proxy puts each argument at its constant offset, with no writer to set up.
    /// </summary>
    /// <exception cref="ArgumentOutOfRangeException">The value does not fit at that offset.</exception>
    [System.Runtime.CompilerServices.MethodImpl(System.Runtime.CompilerServices.MethodImplOptions.AggressiveInlining)]
    protected static void PutArgument<T>(Span<byte> arguments, int offset, T value) where T : unmanaged
    {
        int size = System.Runtime.CompilerServices.Unsafe.SizeOf<T>();
        if ((uint)offset > (uint)arguments.Length || (uint)size > (uint)(arguments.Length - offset))
        {
            ThrowArgumentsTooSmall();
        }
        ref byte destination = ref System.Runtime.CompilerServices.Unsafe.Add(ref System.Runtime.InteropServices.MemoryMarshal.GetReference(arguments), offset);
        if (!typeof(T).IsPrimitive && !typeof(T).IsEnum)
        {
            // As MarshalWriter.Write: the block is cleared before the value is written over it, so padding the copy
            // skips holds no earlier bytes of the buffer. Folded away for primitives and enums.
            System.Runtime.CompilerServices.Unsafe.InitBlockUnaligned(ref destination, 0, (uint)size);
        }
        System.Runtime.CompilerServices.Unsafe.WriteUnaligned(ref destination, value);
    }

    [System.Diagnostics.CodeAnalysis.DoesNotReturn]
    private static void ThrowArgumentsTooSmall() =>
        throw new ArgumentOutOfRangeException("offset", "The argument does not fit in the span at that offset.");

    /// <summary>
    /// For an asynchronous call that <see cref="BeginAsyncCall(uint)"/> found without a link: completes once the channel
    /// has one again, with the deadline the call keeps (its token and its timeout end the wait).
    /// </summary>
    protected ValueTask<long> ReconnectAsync(CancellationToken cancellationToken) => Connection.ReconnectAsync(cancellationToken);

    /// <summary>The call made again on this thread after <see cref="ReconnectAsync"/> keeps <paramref name="deadline"/>.</summary>
    protected void ContinueCall(long deadline) => Connection.ContinueCall(deadline);

    /// <summary>Releases the remote object when this proxy was received by reference; later calls raise <see cref="ObjectDisposedException"/>.</summary>
    public void Dispose()
    {
        Connection.Release(this);
        GC.SuppressFinalize(this);
    }
}
