package mqttsn

import "testing"

func BenchmarkEncodePublish255(b *testing.B) {
	buf := make([]byte, 0, 512)
	data := make([]byte, 255)
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	for i := 0; b.Loop(); i++ {
		buf, _ = AppendPublish(buf[:0], Flags(0).WithQoS(1), 1, uint16(i), data)
	}
}

func BenchmarkDecodePublish255(b *testing.B) {
	dg, _ := AppendPublish(nil, Flags(0).WithQoS(1), 1, 2, make([]byte, 255))
	var p Publish
	b.ReportAllocs()
	b.SetBytes(255)
	for b.Loop() {
		_, body, err := ReadHeader(dg)
		if err != nil || p.Decode(body) != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkPubackRoundTrip(b *testing.B) {
	buf := make([]byte, 0, 16)
	a := IDAck{T: PUBACK}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		buf = AppendIDAck(buf[:0], PUBACK, 1, uint16(i), Accepted)
		_, body, _ := ReadHeader(buf)
		if err := a.Decode(body); err != nil {
			b.Fatal(err)
		}
	}
}
