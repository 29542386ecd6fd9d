using System.Buffers;
using System.Diagnostics.CodeAnalysis;

namespace XCall.Transport.Shm;

internal sealed partial class ShmChannel
{
    /// <inheritdoc/>
    public override IBufferWriter<byte> BeginFrame(in FrameHeader header)
    {
        long deadline = SendDeadline;
        if (deadline == 0)
        {
            _sendLock.Enter();
        }
        else if (!_sendLock.TryEnter(RemainingMs(deadline)))
        {
            throw new XCallTimeoutException(_endpoint, "another frame of the connection held the send side for the call's timeout (the peer takes no data)");
        }
        try
        {
            if (Volatile.Read(ref _stopping) != 0)
            {
                ThrowStopped();
            }
            if (_writer.IsFrameOpen)
            {
                throw FrameAlreadyOpen(_endpoint);
            }
            _writer.Deadline = deadline;
            _writer.BeginFrame(header);
            return _writer;
        }
        catch
        {
            _sendLock.Exit();
            throw;
        }
    }

    /// <inheritdoc/>
    public override void CommitFrame()
    {
        CheckSendLockHeld();
        try
        {
            _writer.Commit();
            _outSignal.WakeConsumerIfSleeping(_writer.Tail);
        }
        finally
        {
            StopIfBroken();
            _sendLock.Exit();
        }
    }

    /// <inheritdoc/>
    public override void AbortFrame()
    {
        CheckSendLockHeld();
        try
        {
            if (_writer.Broken || Volatile.Read(ref _stopping) != 0)
            {
                _writer.Drop(); // no abort record: it would wait for room the peer never frees; the ring goes with the channel
            }
            else if (_writer.IsFrameOpen && _writer.Abort())
            {
                _outSignal.WakeConsumerIfSleeping();
            }
        }
        finally
        {
            StopIfBroken();
            _sendLock.Exit();
        }
    }

    /// <summary>A frame timed out half published: nothing more can follow it in the ring, so the channel stops.</summary>
    private void StopIfBroken()
    {
        if (_writer.Broken)
        {
            RequestStop(StopKind.Fault, new XCallTimeoutException(_endpoint, "the peer stopped taking data in the middle of a frame; the connection is closed"));
        }
    }

    private void CheckSendLockHeld()
    {
        if (!_sendLock.IsHeldByCurrentThread || !_writer.IsFrameOpen)
        {
            throw new InvalidOperationException("No frame was begun on this thread (BeginFrame and CommitFrame/AbortFrame must run on the same thread).");
        }
    }

    [DoesNotReturn]
    private void ThrowStopped()
    {
        StopKind kind;
        Exception? error;
        lock (_stateLock)
        {
            kind = _stopKind;
            error = _stopError;
        }
        throw new XCallDisconnectedException(_endpoint, StopText(kind, error), error);
    }
}
