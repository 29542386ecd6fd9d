namespace XCall.Parallel.Host;

/// <summary>What a host answers for one batch of a tunnel.</summary>
/// <param name="Replies">The reply and error frames of the batch's calls, encoded as <see cref="FrameRecords"/> writes them.</param>
/// <param name="Failures">The one-way calls of the batch that threw, in the order they ran.</param>
/// <param name="Contracts">The contracts whose calls ran, parallel to <paramref name="Calls"/> and <paramref name="Nanoseconds"/>.</param>
/// <param name="Calls">How many calls of each contract ran.</param>
/// <param name="Nanoseconds">How long the host spent running them, dispatch included.</param>
internal sealed record BatchResult(byte[] Replies, OneWayFailure[] Failures, string[] Contracts, long[] Calls, long[] Nanoseconds);

/// <summary>A one-way call that threw on its host.</summary>
/// <param name="ObjectId">The object it was made on.</param>
/// <param name="Method">The method's name.</param>
/// <param name="ExceptionType">The full name of the exception's type.</param>
/// <param name="Message">The exception's message.</param>
internal sealed record OneWayFailure(ulong ObjectId, string Method, string ExceptionType, string Message);
