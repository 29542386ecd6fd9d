using System.Runtime.InteropServices;

namespace XCall.Marshal.Tests;

public enum ByteColor : byte { Red = 1, Green = 2, Blue = 255 }

public enum LongCode : long { Low = long.MinValue, Zero = 0, High = long.MaxValue }

[Flags]
public enum Permissions : uint { None = 0, Read = 1, Write = 2, Execute = 4, All = 0xFFFF_FFFF }

public enum SignedShort : short { Negative = short.MinValue, Positive = short.MaxValue }

/// <summary>A user unmanaged struct with fields of many types and no padding (56 bytes), so its bytes
/// are fully determined by its fields.</summary>
[StructLayout(LayoutKind.Sequential)]
public struct MixedStruct : IEquatable<MixedStruct>
{
    public Guid Id;
    public long Long;
    public double Double;
    public int Int;
    public float Float;
    public DayOfWeek Day;
    public int Extra;
    public short Short;
    public char Char;
    public byte Byte;
    public bool Flag;
    public ushort UShort;

    public static MixedStruct Random(Random random) => new()
    {
        Id = Wire.RandomBits<Guid>(random),
        Long = random.NextInt64(long.MinValue, long.MaxValue),
        Double = random.NextDouble() * 1e300 - 5e299,
        Int = random.Next(int.MinValue, int.MaxValue),
        Float = (float)(random.NextDouble() - 0.5) * 1e30f,
        Day = (DayOfWeek)random.Next(0, 7),
        Extra = random.Next(),
        Short = (short)random.Next(short.MinValue, short.MaxValue + 1),
        Char = (char)random.Next(0, 0x10000),
        Byte = (byte)random.Next(0, 256),
        Flag = random.Next(2) == 1,
        UShort = (ushort)random.Next(0, 0x10000),
    };

    public readonly bool Equals(MixedStruct other) =>
        Id == other.Id && Long == other.Long && Double.Equals(other.Double) && Int == other.Int &&
        Float.Equals(other.Float) && Day == other.Day && Extra == other.Extra && Short == other.Short &&
        Char == other.Char && Byte == other.Byte && Flag == other.Flag && UShort == other.UShort;

    public override readonly bool Equals(object? obj) => obj is MixedStruct other && Equals(other);

    public override readonly int GetHashCode() => HashCode.Combine(Id, Long, Int, Char);

    public override readonly string ToString() => $"MixedStruct({Id}, {Long}, {Double}, {Int}, {Float}, {Day}, {Extra}, {Short}, {(int)Char}, {Byte}, {Flag}, {UShort})";
}

/// <summary>A struct that holds references, so it is marshalled field by field (and its nullable form
/// through <see cref="NullableValueMarshaller{T, TMarshaller}"/>).</summary>
public readonly record struct Person(string? Name, int Age, DateTime? Born);

public abstract class PersonMarshaller : IMarshaller<Person>
{
    public static void Write(ref MarshalWriter writer, Person value)
    {
        writer.WriteString(value.Name);
        writer.WriteInt32(value.Age);
        writer.WriteNullable(value.Born);
    }

    public static Person Read(ref MarshalReader reader)
    {
        reader.EnterObject();
        var person = new Person(reader.ReadString(), reader.ReadInt32(), reader.ReadNullable<DateTime>());
        reader.ExitObject();
        return person;
    }
}

/// <summary>A linked list node: a recursive type, as the generator would marshal it, with a depth guard.</summary>
public sealed class Node
{
    public int Value { get; init; }

    public Node? Next { get; init; }

    public static Node? Chain(int length)
    {
        Node? head = null;
        for (int i = length; i > 0; i--)
        {
            head = new Node { Value = i, Next = head };
        }
        return head;
    }

    public int Length => 1 + (Next?.Length ?? 0);
}

public abstract class NodeMarshaller : IMarshaller<Node?>
{
    public static void Write(ref MarshalWriter writer, Node? value)
    {
        writer.WritePresence(value is not null);
        if (value is not null)
        {
            writer.WriteInt32(value.Value);
            Write(ref writer, value.Next);
        }
    }

    public static Node? Read(ref MarshalReader reader)
    {
        if (!reader.ReadPresence())
        {
            return null;
        }
        reader.EnterObject();
        int value = reader.ReadInt32();
        var node = new Node { Value = value, Next = Read(ref reader) };
        reader.ExitObject();
        return node;
    }
}
