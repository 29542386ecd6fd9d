using System.Runtime.CompilerServices;
using XCall.Runtime.CompilerServices;

namespace XCall.Runtime;

// What a call is checked for before its frame goes out, and the exceptions the connection throws, kept out of the
// hot paths ([NoInlining]).
public sealed partial class XCallConnection
{
    /// <summary>Before a frame is begun: a reference proxy that was disposed, or came over a link already lost, fails here.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private void ThrowIfUnusableReference(ProxyBase? proxy)
    {
        if (proxy?.Reference is { } reference && (reference.Released || reference.Link <= _references.LostLink))
        {
            ThrowReleasedOrLost(proxy);
        }
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private void ThrowReleasedOrLost(ProxyBase proxy) =>
        throw (proxy.Reference!.Released ? Released(proxy) : ReferenceLost(proxy));

    /// <summary>The failure of a call on (or a send of) a reference proxy that was disposed.</summary>
    internal static ObjectDisposedException Released(ProxyBase proxy) =>
        new(proxy.Dispatcher.ContractName, $"The reference to object {proxy.ObjectId} of the peer was released (disposed).");

    /// <summary>The failure of a call on (or a send of) a reference proxy that came over a link that was lost.</summary>
    internal XCallDisconnectedException ReferenceLost(ProxyBase proxy) =>
        new(RemoteEndpoint,
            $"the reference to object {proxy.ObjectId} ({proxy.Dispatcher.ContractName}) came over a link that was lost; " +
            "references do not survive a reconnect: get the object again from the service");

    /// <summary>
    /// With the frame begun (so the link it goes on is settled): a reference received over an earlier link
    /// names nothing, or another object, on this one. The frame is dropped and the call fails.
    /// </summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    private void CheckLinkOrAbort(ProxyBase proxy)
    {
        int link = Channel.LinkGeneration;
        if (proxy.Reference!.Link == link)
        {
            return;
        }
        Channel.AbortFrame();
        throw ReferenceLost(proxy);
    }

    /// <summary>
    /// A synchronous call on this connection from a call that runs on the thread receiving its frames (inline
    /// dispatch, or a one-way call past the connection's bounds): that thread would wait for a reply only it could read.
    /// </summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    private void ThrowWaitOnReceivingThread()
    {
        (string call, string fix) = Options.DispatchMode == DispatchMode.Inline
            ? ("A call dispatched inline (ConnectionOptions.DispatchMode = Inline) runs", "or serve the contract with DispatchMode.Concurrent")
            : ("A one-way call past ConnectionOptions.MaxConcurrentCalls = " + Options.MaxConcurrentCalls + " or MaxConcurrentArgumentBytes = " + Options.MaxConcurrentArgumentBytes + " runs",
               "or raise the limits");
        throw new XCallException(
            $"{call} on the thread that receives the frames of the connection to {RemoteEndpoint}, and cannot make a synchronous call on " +
            $"that connection: its reply could only be read by this thread. Make the call asynchronous, {fix}.");
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private void ThrowClosed() =>
        throw new XCallDisconnectedException(RemoteEndpoint, ReasonOf(_calls.CloseReason) ?? "the connection is closed", _calls.CloseReason);

    /// <summary>Why <paramref name="error"/> ended the connection, without the "Connection to ... lost" a
    /// disconnect's message starts with (a new disconnect adds its own).</summary>
    private static string? ReasonOf(Exception? error) => error is XCallDisconnectedException lost ? lost.Reason : error?.Message;
}
