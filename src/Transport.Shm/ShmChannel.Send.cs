using System.Buffers;
using System.Diagnostics.CodeAnalysis;

namespace XCall.Transport.Shm;

internal sealed partial class ShmChannel
{
    /// <inheritdoc/>
    public override IBufferWriter<byte> BeginFrame(in FrameHeader header)
    {
        _sendLock.Enter();
        try
        {
            if (Volatile.Read(ref _stopping) != 0)
            {
                ThrowStopped();
            }
            if (_writer.IsFrameOpen)
            {
                throw new InvalidOperationException("BeginFrame was called again on this thread before CommitFrame or AbortFrame.");
            }
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
            _sendLock.Exit();
        }
    }

    /// <inheritdoc/>
    public override void AbortFrame()
    {
        CheckSendLockHeld();
        try
        {
            if (_writer.IsFrameOpen && _writer.Abort())
            {
                _outSignal.WakeConsumerIfSleeping();
            }
        }
        finally
        {
            _sendLock.Exit();
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
