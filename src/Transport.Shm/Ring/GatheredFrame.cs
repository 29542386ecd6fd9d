using System.Buffers;
using XCall.Marshal;

namespace XCall.Transport.Shm.Ring;

/// <summary>
/// A streamed frame (larger than the ring) copied out of the ring chunk by chunk, so the writer can go on;
/// handed to the handler once complete, with its exact length, through the chunked <see cref="MarshalReader"/>.
/// </summary>
/// <param name="owner">The reader that gathers it, which says where lent arrays of a frame are read (see <see cref="RingReader.PeerMemoryFor"/>).</param>
internal sealed unsafe class GatheredFrame(RingReader owner) : IMarshalInput
{
    private const int SegmentSize = 1 << 20;

    private readonly List<byte[]> _segments = [];
    private FrameHeader _header;
    private long _length;
    private int _nextSegment;

    public bool IsActive { get; private set; }

    /// <summary>The kind of the frame being gathered.</summary>
    public FrameKind Kind => _header.Kind;

    /// <summary>The flags of the frame being gathered.</summary>
    public ushort Flags => _header.Flags;

    public void Begin(in FrameHeader header)
    {
        _header = header;
        _length = 0;
        IsActive = true;
    }

    public void Append(byte* source, int count, long maxLength, long position)
    {
        if (_length + count > maxLength)
        {
            Reset();
            throw new XCallProtocolException($"Malformed shared-memory record at ring position {position}: streamed frame longer than the {maxLength}-byte limit.");
        }
        while (count > 0)
        {
            int index = (int)(_length / SegmentSize);
            int offset = (int)(_length % SegmentSize);
            if (index == _segments.Count)
            {
                _segments.Add(ArrayPool<byte>.Shared.Rent(SegmentSize));
            }
            int n = Math.Min(count, SegmentSize - offset);
            new ReadOnlySpan<byte>(source, n).CopyTo(_segments[index].AsSpan(offset));
            source += n;
            count -= n;
            _length += n;
        }
    }

    public void Dispatch(IFrameHandler handler)
    {
        try
        {
            ReadOnlySpan<byte> first = _segments.Count == 0 ? default : _segments[0].AsSpan(0, (int)Math.Min(_length, SegmentSize));
            _nextSegment = 1;
            if (_length <= SegmentSize)
            {
                var reader = new MarshalReader(first, handler.Limits) { PeerMemory = owner.PeerMemoryFor(_header) };
                handler.OnFrame(in _header, ref reader);
            }
            else
            {
                var reader = new MarshalReader(first, _length, this, handler.Limits) { PeerMemory = owner.PeerMemoryFor(_header) };
                handler.OnFrame(in _header, ref reader);
            }
        }
        finally
        {
            Reset();
        }
    }

    public void Reset()
    {
        long pooled = 0;
        foreach (byte[] segment in _segments)
        {
            BoundedArrayPool.Return(segment, ref pooled); // a large frame's segments beyond a few go to the GC
        }
        _segments.Clear();
        _length = 0;
        IsActive = false;
    }

    ReadOnlySpan<byte> IMarshalInput.NextChunk()
    {
        if (_nextSegment >= _segments.Count)
        {
            return default;
        }
        int index = _nextSegment++;
        long start = (long)index * SegmentSize;
        return _segments[index].AsSpan(0, (int)Math.Min(SegmentSize, _length - start));
    }
}
