using System.Runtime.CompilerServices;
using XCall.Runtime.CompilerServices;
using XCall.Transport;

namespace XCall.Runtime;

// A call that stops waiting for its reply: its timeout passes or its token is cancelled. Either completes the call
// with its failure first (whoever claims the call wins, the reply or the failure) and then tells the peer with a
// cancel frame on the link the call went out on.
public sealed partial class XCallConnection
{
    private async ValueTask WaitWithCancellation(PendingCall call, CancellationToken cancellationToken, TimeSpan timeout)
    {
        // What is left of the call's deadline: a call made again after a reconnect has spent part of it already.
        using var timeoutCts = call.Deadline == 0 ? null : new CancellationTokenSource(TimeSpan.FromMilliseconds(Math.Max(0, call.Deadline - Environment.TickCount64)));
        using CancellationTokenRegistration userReg = cancellationToken.UnsafeRegister(static (s, ct) =>
        {
            var (conn, c) = ((XCallConnection, PendingCall))s!;
            conn.CancelPending(c, new OperationCanceledException(ct));
        }, (this, call));
        using CancellationTokenRegistration timeoutReg = timeoutCts is null ? default : timeoutCts.Token.UnsafeRegister(static s =>
        {
            var (conn, c, t) = ((XCallConnection, PendingCall, TimeSpan))s!;
            conn.CancelPending(c, new XCallTimeoutException(conn.RemoteEndpoint, MethodName(c), t));
        }, (this, call, timeout));
        await call.AsValueTask().ConfigureAwait(false);
    }

    /// <summary>Sends a cancel frame for <paramref name="call"/> and fails it locally.</summary>
    internal void CancelPending(PendingCall call, Exception reason)
    {
        ulong id = call.CallId;
        uint methodId = call.MethodId;
        int link = call.Link;
        if (call.CompleteWithFailure(id, reason))
        {
            // To the link the call went out on, or nowhere: a cancel never reconnects on the cancelling thread.
            TrySendControl(FrameKind.Cancel, id, 0, methodId, link);
        }
    }

    /// <summary>The call's method as a user reads it (<c>ICalc.Add</c>), or its id without a proxy.</summary>
    internal static string MethodName(PendingCall call) =>
        call.Proxy is { } proxy ? $"{proxy.Dispatcher.ContractName}.{proxy.Dispatcher.GetMethodName(call.MethodId)}" : $"0x{call.MethodId:x8}";

    [MethodImpl(MethodImplOptions.NoInlining)]
    private void TimeOut(PendingCall call, TimeSpan timeout)
    {
        var error = new XCallTimeoutException(RemoteEndpoint, MethodName(call), timeout);
        CancelPending(call, error);
        // The reply may have raced in; whichever completed the call wins, and the reader reports it. If the
        // reply won, it may still be copying: wait for it to finish before the reply is read.
        SpinWait.SpinUntil(() => call.IsCompleted);
    }

    /// <summary>Registers a cancellation token for a sync call in flight: cancelling sends a cancel frame.</summary>
    internal CancellationTokenRegistration RegisterCancellation(PendingCall call, CancellationToken cancellationToken)
    {
        if (!cancellationToken.CanBeCanceled)
        {
            return default;
        }
        if (cancellationToken.IsCancellationRequested)
        {
            // Registering would run the callback here, on the thread whose call frame is still open.
            call.CancelledBeforeSend = true;
            call.CancelledToken = cancellationToken;
            return default;
        }
        return cancellationToken.UnsafeRegister(static (s, ct) =>
        {
            var (conn, c) = ((XCallConnection, PendingCall))s!;
            conn.CancelPending(c, new OperationCanceledException(ct));
        }, (this, call));
    }
}
