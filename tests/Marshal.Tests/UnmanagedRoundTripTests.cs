namespace XCall.Marshal.Tests;

public sealed class UnmanagedRoundTripTests
{
    /// <summary>
    /// Round-trips <paramref name="value"/> through every path an unmanaged value can take (Write/Read,
    /// UnmanagedMarshaller, WriteNullable/ReadNullable and NullableMarshaller) and every kind of memory,
    /// and checks the encoding is exactly the value's bytes.
    /// </summary>
    private static void AssertRoundTrips<T>(T value, int[]? spanSizes = null, int chunkedReads = 4) where T : unmanaged
    {
        byte[] plain = Wire.AssertRoundTrip(value, (ref MarshalWriter w, T v) => w.Write(v), (ref MarshalReader r) => r.Read<T>(),
            Wire.AssertBitwiseEqual, spanSizes, chunkedReads);
        Wire.AssertSameBytes(Wire.BytesOf(value), plain, typeof(T).Name);

        byte[] viaMarshaller = Wire.RoundTrip<T, UnmanagedMarshaller<T>>(value, spanSizes, chunkedReads, Wire.AssertBitwiseEqual);
        Wire.AssertSameBytes(plain, viaMarshaller, "UnmanagedMarshaller");

        byte[] nullable = Wire.AssertRoundTrip<T?>(value, (ref MarshalWriter w, T? v) => w.WriteNullable(v), (ref MarshalReader r) => r.ReadNullable<T>(),
            (e, a) => { Assert.True(a.HasValue); Wire.AssertBitwiseEqual(e!.Value, a!.Value); }, spanSizes, chunkedReads);
        Assert.Equal(WireFormat.Present, nullable[0]);
        Wire.AssertSameBytes(plain, nullable.AsSpan(1), "nullable");

        Wire.RoundTrip<T?, NullableMarshaller<T>>(value, spanSizes, chunkedReads,
            (e, a) => { Assert.True(a.HasValue); Wire.AssertBitwiseEqual(e!.Value, a!.Value); });
    }

    private static void AssertAllRoundTrip<T>(params T[] values) where T : unmanaged
    {
        foreach (T value in values)
        {
            AssertRoundTrips(value);
        }
    }

    [Fact]
    public void Integer_primitives_round_trip_at_their_boundaries()
    {
        AssertAllRoundTrip<byte>(byte.MinValue, 1, 0x7F, 0x80, byte.MaxValue);
        AssertAllRoundTrip<sbyte>(sbyte.MinValue, -1, 0, 1, sbyte.MaxValue);
        AssertAllRoundTrip<short>(short.MinValue, -1, 0, 1, short.MaxValue);
        AssertAllRoundTrip<ushort>(ushort.MinValue, 1, 0x8000, ushort.MaxValue);
        AssertAllRoundTrip(int.MinValue, -1, 0, 1, int.MaxValue);
        AssertAllRoundTrip(uint.MinValue, 1u, 0x8000_0000u, uint.MaxValue);
        AssertAllRoundTrip(long.MinValue, -1L, 0L, 1L, long.MaxValue);
        AssertAllRoundTrip(ulong.MinValue, 1UL, 0x8000_0000_0000_0000UL, ulong.MaxValue);
        AssertAllRoundTrip<nint>(nint.MinValue, -1, 0, 1, nint.MaxValue);
        AssertAllRoundTrip<nuint>(nuint.MinValue, 1, nuint.MaxValue);
        AssertAllRoundTrip(Int128.MinValue, Int128.MaxValue);
        AssertAllRoundTrip(UInt128.MinValue, UInt128.MaxValue);
    }

    [Fact]
    public void Values_are_written_as_their_little_endian_bytes_of_their_own_size()
    {
        Assert.True(BitConverter.IsLittleEndian);
        Assert.Equal([0x04, 0x03, 0x02, 0x01], Wire.Encode((ref MarshalWriter w) => w.WriteInt32(0x01020304)));
        Assert.Equal([0xFE, 0xFF], Wire.Encode((ref MarshalWriter w) => w.Write<short>(-2)));
        Assert.Equal([0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01], Wire.Encode((ref MarshalWriter w) => w.Write(0x0102030405060708L)));
        Assert.Equal([0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xF0, 0x3F], Wire.Encode((ref MarshalWriter w) => w.Write(1.0)));
        Assert.Equal([0x41, 0x00], Wire.Encode((ref MarshalWriter w) => w.Write('A')));
        Assert.Equal([0x01, 0x00], Wire.Encode((ref MarshalWriter w) => { w.WriteBoolean(true); w.WriteBoolean(false); }));
        Assert.Equal([0x7F], Wire.Encode((ref MarshalWriter w) => w.WriteByte(0x7F)));

        Assert.Single(Wire.Encode((ref MarshalWriter w) => w.Write(ByteColor.Blue)));
        Assert.Equal(8, Wire.Encode((ref MarshalWriter w) => w.Write(LongCode.High)).Length);
        Assert.Equal(16, Wire.Encode((ref MarshalWriter w) => w.Write(decimal.MaxValue)).Length);
        Assert.Equal(16, Wire.Encode((ref MarshalWriter w) => w.Write(Guid.NewGuid())).Length);
        Assert.Equal(8, Wire.Encode((ref MarshalWriter w) => w.Write(DateTime.UtcNow)).Length);
        Assert.Equal(56, Wire.Encode((ref MarshalWriter w) => w.Write(new MixedStruct())).Length);
        Assert.Equal(IntPtr.Size, Wire.Encode((ref MarshalWriter w) => w.Write((nint)1)).Length);
    }

    [Fact]
    public void Floating_point_special_values_round_trip_bit_exactly()
    {
        double customNaN = BitConverter.Int64BitsToDouble(0x7FF8_0000_DEAD_BEEF);
        double signallingNaN = BitConverter.Int64BitsToDouble(unchecked((long)0xFFF0_0000_0000_0001));
        AssertAllRoundTrip(double.NaN, customNaN, signallingNaN, double.PositiveInfinity, double.NegativeInfinity,
            -0.0, 0.0, double.Epsilon, -double.Epsilon, double.MinValue, double.MaxValue, Math.PI);

        float customNaNf = BitConverter.Int32BitsToSingle(0x7FC0_1234);
        AssertAllRoundTrip(float.NaN, customNaNf, float.PositiveInfinity, float.NegativeInfinity, -0.0f, 0.0f,
            float.Epsilon, float.MinValue, float.MaxValue);

        AssertAllRoundTrip(Half.NaN, Half.NegativeZero, Half.PositiveInfinity, Half.MinValue, Half.MaxValue, Half.Epsilon);

        // -0.0 keeps its sign: it is not merely equal to 0.0.
        double negativeZero = Wire.Decode(Wire.Encode((ref MarshalWriter w) => w.Write(-0.0)), (ref MarshalReader r) => r.Read<double>());
        Assert.True(double.IsNegative(negativeZero));
        Assert.Equal(0x7FF8_0000_DEAD_BEEF, BitConverter.DoubleToInt64Bits(
            Wire.Decode(Wire.Encode((ref MarshalWriter w) => w.Write(customNaN)), (ref MarshalReader r) => r.Read<double>())));
    }

    [Fact]
    public void Every_char_code_unit_round_trips_through_tiny_spans_and_chunks()
    {
        WriteAction write = (ref MarshalWriter w) =>
        {
            for (int c = 0; c <= char.MaxValue; c++)
            {
                w.Write((char)c);
            }
        };
        byte[] canonical = Wire.Encode(write);
        Assert.Equal(2 * 65536, canonical.Length);
        foreach (int size in new[] { 1, 3, 16 })
        {
            Wire.AssertSameBytes(canonical, Wire.EncodeTiny(write, size));
        }
        ReadFunc<bool> readAll = (ref MarshalReader r) =>
        {
            for (int c = 0; c <= char.MaxValue; c++)
            {
                Assert.Equal((char)c, r.Read<char>());
            }
            return true;
        };
        Assert.True(Wire.Decode(canonical, readAll));
        Assert.True(Wire.DecodeChunked(canonical, readAll, seed: 3, maxChunk: 5));
        AssertAllRoundTrip(char.MinValue, 'A', '\uD83D', '\uDE00', '\uFFFE', char.MaxValue);
    }

    [Fact]
    public void Booleans_round_trip_through_WriteBoolean_and_as_unmanaged_values()
    {
        foreach (bool value in new[] { false, true })
        {
            byte[] bytes = Wire.AssertRoundTrip(value, (ref MarshalWriter w, bool v) => w.WriteBoolean(v), (ref MarshalReader r) => r.ReadBoolean(),
                (e, a) => Assert.Equal(e, a));
            Assert.Equal([value ? (byte)1 : (byte)0], bytes);
            AssertRoundTrips(value);
        }
    }

    [Fact]
    public void Enums_round_trip_including_values_they_do_not_declare()
    {
        AssertAllRoundTrip(ByteColor.Red, ByteColor.Blue, (ByteColor)0, (ByteColor)77);
        AssertAllRoundTrip(LongCode.Low, LongCode.Zero, LongCode.High, (LongCode)12345);
        AssertAllRoundTrip(Permissions.None, Permissions.Read | Permissions.Execute, Permissions.All, (Permissions)0x8000_0000);
        AssertAllRoundTrip(SignedShort.Negative, SignedShort.Positive, (SignedShort)(-1));
        AssertAllRoundTrip(DayOfWeek.Sunday, DayOfWeek.Saturday);
    }

    [Fact]
    public void DateTime_round_trips_with_its_ticks_and_kind()
    {
        var values = new[]
        {
            DateTime.MinValue, DateTime.MaxValue,
            new DateTime(2024, 2, 29, 23, 59, 59, 999, DateTimeKind.Utc).AddTicks(9999),
            new DateTime(2001, 1, 1, 0, 0, 0, DateTimeKind.Local),
            new DateTime(1999, 12, 31, 12, 0, 0, DateTimeKind.Unspecified),
            DateTime.SpecifyKind(DateTime.MaxValue, DateTimeKind.Utc),
            DateTime.SpecifyKind(DateTime.MinValue, DateTimeKind.Local),
            DateTime.Now, DateTime.UtcNow,
        };
        foreach (DateTime value in values)
        {
            AssertRoundTrips(value);
            DateTime back = Wire.Decode(Wire.Encode((ref MarshalWriter w) => w.Write(value)), (ref MarshalReader r) => r.Read<DateTime>());
            Assert.Equal(value.Kind, back.Kind);
            Assert.Equal(value.Ticks, back.Ticks);
        }
    }

    [Fact]
    public void DateTimeOffset_round_trips_with_its_offset()
    {
        var values = new[]
        {
            DateTimeOffset.MinValue, DateTimeOffset.MaxValue, DateTimeOffset.UnixEpoch,
            new DateTimeOffset(2020, 6, 1, 8, 30, 0, TimeSpan.FromHours(14)),
            new DateTimeOffset(2020, 6, 1, 8, 30, 0, TimeSpan.FromHours(-14)),
            new DateTimeOffset(2020, 6, 1, 8, 30, 0, TimeSpan.FromMinutes(345)),
        };
        foreach (DateTimeOffset value in values)
        {
            AssertRoundTrips(value);
            DateTimeOffset back = Wire.Decode(Wire.Encode((ref MarshalWriter w) => w.Write(value)), (ref MarshalReader r) => r.Read<DateTimeOffset>());
            Assert.Equal(value.Offset, back.Offset);
            Assert.Equal(value.UtcTicks, back.UtcTicks);
        }
    }

    [Fact]
    public void TimeSpan_Guid_and_other_framework_structs_round_trip()
    {
        AssertAllRoundTrip(TimeSpan.MinValue, TimeSpan.MaxValue, TimeSpan.Zero, TimeSpan.FromTicks(-1), TimeSpan.FromDays(1.5));
        AssertAllRoundTrip(Guid.Empty, Guid.AllBitsSet, Guid.Parse("0f8fad5b-d9cb-469f-a165-70867728950e"));
        AssertAllRoundTrip(DateOnly.MinValue, DateOnly.MaxValue, new DateOnly(2024, 2, 29));
        AssertAllRoundTrip(TimeOnly.MinValue, TimeOnly.MaxValue);
    }

    [Fact]
    public void Decimal_round_trips_with_its_scale_and_sign()
    {
        AssertAllRoundTrip(decimal.MinValue, decimal.MaxValue, decimal.Zero, decimal.One, decimal.MinusOne,
            1.0m, 1.00m, -0.0m, 0.0000000000000000000000000001m, 79228162514264337593543950335m, 3.1415926535897932384626433832m);
        decimal back = Wire.Decode(Wire.Encode((ref MarshalWriter w) => w.Write(1.000m)), (ref MarshalReader r) => r.Read<decimal>());
        Assert.Equal(3, back.Scale);
        Assert.Equal("1.000", back.ToString(System.Globalization.CultureInfo.InvariantCulture));
    }

    [Fact]
    public void User_unmanaged_struct_with_mixed_fields_round_trips()
    {
        var value = new MixedStruct
        {
            Id = Guid.Parse("d3c4b5a6-1111-2222-3333-444455556666"),
            Long = long.MinValue,
            Double = double.NegativeInfinity,
            Int = int.MaxValue,
            Float = float.NaN,
            Day = DayOfWeek.Friday,
            Extra = -7,
            Short = short.MinValue,
            Char = '\uDBFF',
            Byte = 0xFF,
            Flag = true,
            UShort = ushort.MaxValue,
        };
        AssertAllRoundTrip(value, default(MixedStruct));
        MixedStruct back = Wire.Decode(Wire.Encode((ref MarshalWriter w) => w.Write(value)), (ref MarshalReader r) => r.Read<MixedStruct>());
        Assert.Equal(value, back);
    }

    [Fact]
    public void Nullable_unmanaged_values_round_trip_present_and_null()
    {
        AssertNullRoundTrips<int>();
        AssertNullRoundTrips<double>();
        AssertNullRoundTrips<DateTime>();
        AssertNullRoundTrips<Guid>();
        AssertNullRoundTrips<decimal>();
        AssertNullRoundTrips<MixedStruct>();
        AssertNullRoundTrips<ByteColor>();

        // Present values of the default are not confused with null.
        AssertRoundTrips(0);
        AssertRoundTrips(default(Guid));
        Assert.Equal([1, 0, 0, 0, 0], Wire.Encode((ref MarshalWriter w) => w.WriteNullable<int>(0)));
    }

    private static void AssertNullRoundTrips<T>() where T : unmanaged
    {
        byte[] bytes = Wire.AssertRoundTrip<T?>(null, (ref MarshalWriter w, T? v) => w.WriteNullable(v), (ref MarshalReader r) => r.ReadNullable<T>(),
            (e, a) => Assert.False(a.HasValue));
        Assert.Equal([WireFormat.Null], bytes);
        bytes = Wire.RoundTrip<T?, NullableMarshaller<T>>(null, assertEqual: (e, a) => Assert.False(a.HasValue));
        Assert.Equal([WireFormat.Null], bytes);
    }

    [Fact]
    public void Random_values_of_every_unmanaged_type_round_trip()
    {
        var random = new Random(20240229);
        for (int i = 0; i < 1000; i++)
        {
            int[] spans = [1 + i % 16];
            AssertRoundTrips((byte)random.Next(256), spans, 1);
            AssertRoundTrips((sbyte)random.Next(-128, 128), spans, 1);
            AssertRoundTrips((short)random.Next(short.MinValue, short.MaxValue + 1), spans, 1);
            AssertRoundTrips((ushort)random.Next(0, 0x10000), spans, 1);
            AssertRoundTrips(random.Next(int.MinValue, int.MaxValue), spans, 1);
            AssertRoundTrips((uint)random.NextInt64(0, 1L << 32), spans, 1);
            AssertRoundTrips(random.NextInt64(long.MinValue, long.MaxValue), spans, 1);
            AssertRoundTrips(Wire.RandomBits<ulong>(random), spans, 1);
            AssertRoundTrips(Wire.RandomBits<nint>(random), spans, 1);
            AssertRoundTrips(Wire.RandomBits<double>(random), spans, 1);
            AssertRoundTrips(Wire.RandomBits<float>(random), spans, 1);
            AssertRoundTrips((random.NextDouble() - 0.5) * Math.Pow(10, random.Next(-300, 300)), spans, 1);
            AssertRoundTrips((char)random.Next(0, 0x10000), spans, 1);
            AssertRoundTrips(random.Next(2) == 1, spans, 1);
            AssertRoundTrips((ByteColor)random.Next(256), spans, 1);
            AssertRoundTrips((LongCode)random.NextInt64(), spans, 1);
            AssertRoundTrips(new DateTime(random.NextInt64(DateTime.MinValue.Ticks, DateTime.MaxValue.Ticks + 1), (DateTimeKind)random.Next(3)), spans, 1);
            AssertRoundTrips(new DateTimeOffset(random.NextInt64(DateTime.MinValue.Ticks + TimeSpan.TicksPerDay, DateTime.MaxValue.Ticks - TimeSpan.TicksPerDay),
                TimeSpan.FromMinutes(random.Next(-14 * 60, 14 * 60 + 1))), spans, 1);
            AssertRoundTrips(TimeSpan.FromTicks(random.NextInt64(long.MinValue, long.MaxValue)), spans, 1);
            AssertRoundTrips(Wire.RandomBits<Guid>(random), spans, 1);
            AssertRoundTrips(new decimal(random.Next(), random.Next(), random.Next(), random.Next(2) == 1, (byte)random.Next(29)), spans, 1);
            AssertRoundTrips(MixedStruct.Random(random), spans, 1);
        }
    }
}
