namespace XCall.Transport.Shm.Ring;

/// <summary>What one <see cref="RingReader.Poll"/> did.</summary>
internal enum PollResult
{
    /// <summary>No published record: the ring is empty.</summary>
    Empty,

    /// <summary>Records were consumed (padding, part of a streamed frame) but no frame was delivered.</summary>
    Progress,

    /// <summary>One frame was handed to the handler.</summary>
    Frame,

    /// <summary>One frame was handed to the handler, which detached it (<see cref="RingReader.Detach"/>): the thread
    /// that polled may have lost the receiver role meanwhile, and must check before it polls again.</summary>
    Detached,

    /// <summary>The writer said goodbye: nothing more will come.</summary>
    Goodbye,

    /// <summary>The record at the read position is the head of a batch of one-way frames the writer still holds (see
    /// RingWriter): nothing was consumed; the writer publishes it soon, or a later poll takes it anyway. Not a reason
    /// to sleep.</summary>
    Held,
}
