"""Byte-to-Unicode tables of the single-byte Oracle character sets OLR supports.

Each record names a set, the Python codec it is closest to, and the bytes where Oracle's
mapping (as carried by OpenLogReplicator's locales) differs from that codec: ``bb=cccc`` maps
byte ``bb`` to code point ``cccc``; ``bb=cccc+n`` also maps the next ``n`` bytes to the next
code points (runs of ``fffd`` stay ``fffd``). Base ``7bit`` means a 7-bit set: ASCII with the
listed replacements, indexed by ``byte & 0x7f``. Undefined bytes map to U+FFFD, as in OLR.
Continuation lines are indented.
"""

from __future__ import annotations

from typing import Final

SINGLE_BYTE_SOURCE: Final = """
AR8ADOS710 ascii
    80=64b+1 82=e9 83=e2 84=64d 85=e0 86=64e 87=e7 88=ea+1 8a=e8 8b=ef 8c=ee 8d=64f+3 93=f4 96=fb
    97=f9 a5=621+8 ae=ab af=bb e0=62a+16 f1=641+9 fb=640 fe=220e
AR8ADOS710T ascii
    80=64b+1 82=e9 83=e2 84=64d 85=e0 86=64e 87=e7 88=ea+1 8a=e8 8b=ef 8c=ee 8d=64f+3 91=f8f3
    92=fc5e 93=f4 94=fc5f+1 96=fb 97=f9 98=fc61+1 a5=621+8 ae=ab af=bb e0=62a+16 f1=641+9 fb=640
    fe=220e
AR8ADOS720 cp437
    80=fffd+1 84=fffd 86=fffd 8d=fffd+3 91=651+1 94=a4 95=640 98=621+3 9d=625+16 e0=636+4 e5=641
    e7=642+8 f1=64b+5
AR8ADOS720T ascii
    82=e9 83=e2 84=a0 85=e0 86=e7 87=ea+1 89=e8 8a=ef 8b=ee 91=651+1 93=f4 94=a4 95=640 96=fb 97=f9
    98=621+3 9c=a3 9d=625+16 ae=ab af=bb e0=636+4 e5=641 e6=3bc e7=642+8 f1=64b+5 f8=b0 fd=b2
    fe=220e
AR8APTEC715 ascii
    81=640 82=651+1 84=64e 86=64b 88=64f 8a=64c 8c=650 8e=64d 91=621+5 98=627+1 9b=629+1 9e=62b+1
    a1=62d+1 a4=62f a6=630+1 a9=632 ab=633+4 e0=638+2 e4=641 e6=642+1 ea=644 ef=645+1 f3=647+1
    f6=649 f8=64a f9=f7 fa=d7 fc=ab fd=bb ff=a0
AR8APTEC715T ascii
    81=640 82=651+1 84=64e 85=fc60 86=64b 87=f8f3 88=64f 89=fc61 8a=64c 8b=fc5e 8c=650 8d=fc62
    8e=64d 8f=fc5f 91=621+5 98=627+1 9b=629+1 9e=62b+1 a1=62d+1 a4=62f a6=630+1 a9=632 ab=633+4
    e0=638+2 e4=641 e6=642+1 ea=644 eb=fef5 ec=fef7 ed=fef9 ee=fefb ef=645+1 f3=647+1 f6=649 f8=64a
    f9=f7 fa=d7 fc=ab fd=bb ff=a0
AR8ARABICMACS iso8859_6
    80=c4 81=a0 82=c7 83=c9 84=d1 85=d6 86=dc 87=e1 88=e0 89=e2 8a=e4 8b=6ba 8c=ab 8d=e7 8e=e9
    8f=e8 90=ea+1 92=2026 93=ec 94=ee+1 96=f1 97=f3 98=bb 99=f4 9a=f6+1 9c=fa 9d=f9 9e=fb+1 a0=f8e1
    a1=f8e0 a2=f8df a3=f8de a4=f8dd a5=66a a6=f8bb a7=f8db a8=f8d9+1 aa=d7 ab=f8d7 ad=f8d5 ae=f8d4
    af=f8d3 b0=660+9 ba=f8c8 bc=f8c6 bd=f8c5 be=f8c4 c0=66d db=f8c3 dc=f8c2 dd=f8c1 de=f8c0 df=f8bf
    f3=67e f4=679 f5=686 f6=6d5 f7=6a4 f8=6af f9=688 fa=691 fb=f8be fc=f8bd fd=f8bc fe=698 ff=6d2
AR8ASMO708PLUS iso8859_6
    80=fffd+1 82=e9 83=e2 84=fffd 85=e0 86=fffd 87=e7 88=ea+1 8a=e8 8b=ef 8c=ee 8d=fffd+5 93=f4
    94=fffd+1 96=fb 97=f9 98=fffd+7 ae=ab af=bb f3=f8f3 f4=fc5e+4 fc=3bc fd=a3 fe=220e
AR8ASMO8X iso8859_6
    80=c7 81=fc 82=e9 83=e2 84=e4 85=e0 86=e5 87=e7 88=ea+1 8a=e8 8b=ef 8c=ee 8d=ec 8e=fffd+4 93=f4
    94=f6 95=f2 96=fb 97=f9 98=ae 99=2122 9a=fffd+5 a1=a1+1 a3=192 a5=a5+4 aa=2038 ae=ab af=bb
    b0=b0+3 b6=b6 b7=3b1 b8=3c6 b9=b9 ba=223c bc=bc+2 df=bf f9=d7 fa=f7 fb=3b2 fc=3bc fd=a3 fe=220e
AR8HPARABIC8T iso8859_6
    80=fffd+31 a0=f8e1 a1=f8e0 a2=f8df a3=f8de a4=f8dd a5=66a a6=f8bb a7=f8db a8=f8d9+1 aa=f8d8
    ab=f8d7 ad=f8d5 ae=f8d4 af=f8d3 b0=660+9 ba=f8c8 bc=f8c6 bd=f8c5 be=f8c4 c0=f8b9 db=f8c3
    dc=f8c2 dd=f8c1 de=f8c0 df=f8bf f6=fc60+2 fb=f8be fc=f8bd fd=f8bc fe=f8b8
AR8ISO8859P6 iso8859_6
AR8MSWIN1256 cp1256
AR8MUSSAD768 ascii
    80=621+9 8b=62b+1 8e=62d+13 9c=641+9 a6=640 a7=60c a8=61b a9=61f ae=ab af=bb f9=a0 fe=220e
AR8MUSSAD768T ascii
    80=621+9 8b=62b+1 8e=62d+13 9c=641+9 a6=640 a7=60c a8=61b a9=61f ae=ab af=bb f9=a0 fe=220e
AR8NAFITHA711 ascii
    83=a0 97=652 98=651 99=64e 9b=64b 9d=64f 9f=64c a1=650 a3=64d a5=621+8 ae=ab af=bb e0=62a+16
    f1=640+5 f8=646+1 fb=648+2 fe=220e
AR8NAFITHA711T ascii
    83=a0 97=652 98=651 99=64e 9a=fc60 9b=64b 9c=f8f3 9d=64f 9e=fc61 9f=64c a0=fc5e a1=650 a2=fc62
    a3=64d a4=fc5f a5=621+8 ae=ab af=bb e0=62a+16 f1=640+5 f8=646+1 fb=648+2 fe=220e
AR8NAFITHA721 ascii
    82=e9 83=e2 85=e0 87=e7 88=ea+1 8a=e8 8b=ef 8c=ee 8f=a0 93=f4 94=a4 95=652 96=fb 97=f9 98=651
    99=64e 9b=64b 9d=64f 9f=64c a1=650 a3=64d a5=621+8 ae=ab af=bb e0=62a+16 f1=640+5 f8=646+1
    fb=648+2 fe=220e
AR8NAFITHA721T ascii
    82=e9 83=e2 85=e0 87=e7 88=ea+1 8a=e8 8b=ef 8c=ee 8f=a0 93=f4 94=a4 95=652 96=fb 97=f9 98=651
    99=64e 9a=fc60 9b=64b 9c=f8f3 9d=64f 9e=fc61 9f=64c a0=fc5e a1=650 a2=fc62 a3=64d a4=fc5f
    a5=621+8 ae=ab af=bb e0=62a+16 f1=640+5 f8=646+1 fb=648+2 fe=220e
AR8SAKHR706 cp1252
    80=64b+7 88=621+23 aa=fffd b5=3bc b7=220e ba=fffd bc=fffd+2 c0=639+1 c2=641+2 c8=644+6 cf=640
    d0=110 df=3b2 f0=111
AR8SAKHR707 ascii
    82=e9 83=e2 85=e0 87=e7 88=ea+1 8a=e8 8b=ef 8c=ee 93=f4 96=fb 97=f9 9d=64b+7 a5=621+8 af=a0
    e0=62a+16 f1=641+6 f8=b0 f9=648+2 fc=640
AR8SAKHR707T ascii
    82=e9 83=e2 85=e0 87=e7 88=ea+1 8a=e8 8b=ef 8c=ee 93=f4 96=fb 97=f9 9d=64b+7 a5=621+8 af=a0
    e0=62a+16 f1=641+6 f8=b0 f9=648+2 fc=640
AZ8ISO8859P9E cp1254 80=fffd 82=fffd+10 91=fffd+11 9f=fffd c6=18f e6=259
BG8MSWIN cp1251
    80=fffd+16 95=fffd+2 99=fffd+6 a1=fffd a2=a2+1 a5=a5 a6=2015 ab=2190 b2=2264+1 b4=b4 b5=fffd
    b7=2dd ba=fffd bb=2192 bc=fffd+2 bf=2c7
BG8PC437S cp866
    b0=440+15 c6=2563 c7=2551 cf=2510 d0=2591+2 d3=2502 d4=2524 d5=2116 d6=a7 d7=2557 d8=255d
    e0=3b1+1 e2=393 e3=3c0 e4=3a3 e5=3c3 e6=3bc e7=3c4 e8=3a6 e9=398 ea=3a9 eb=3b4 ec=221e ed=3c6
    ee=3b5 ef=2229 f0=2261 f1=b1 f2=2265 f3=2264 f4=2320+1 f6=f7 f7=2248 f9=b7 fc=207f fd=b2
    fe=220e
BLT8CP921 cp1257
    80=fffd 82=fffd 84=fffd+3 89=fffd 8b=fffd 8d=fffd+2 91=fffd+6 99=fffd 9b=fffd 9d=fffd+1 a1=201d
    a5=201e b4=201c ff=2019
BLT8ISO8859P13 iso8859_13
BLT8MSWIN1257 cp1257 81=81 83=83 88=88 8a=8a 8c=8c 90=90 98=98 9a=9a 9c=9c 9f=9f a1=f8fc a5=f8fd
BLT8PC775 cp775 f9=2022 fe=220e
BN8BSCII ascii
    85=9f3 86=9e6+9 90=985+6 97=98f+1 99=993+1 9b=982+1 9d=981 9e=995+12 ab=9dc ac=9a2 ad=9dd
    ae=9a3 b0=9a4+4 b5=9aa+5 bb=9df bc=9b0 bd=9b2 be=9b6+3 c3=9be+5 c9=9c7+1 cb=9cb+1 d0=f8b7
    d1=f8b6 d2=f8b5 d3=f8b4 d4=f8b3 d5=f8b2 d6=f8b1 d7=f8b0 d8=f8af d9=f8ae da=f8ad db=f8ac dc=f8ab
    de=f8aa e0=f8a9 e1=f8a8 e2=f8a7 e3=f8a6 e4=f8a5 e5=f8a4 e6=f8a3 e7=f8a2 e8=f8a1 e9=f8a0 ea=f89f
    eb=f89e ec=f89d ee=f89c ef=f89b f0=f89a f1=f899 f2=f898 f3=f897 f4=f896
CDN8PC863 cp863
    8d=333 a7=2c9 a9=fffd b0=fffd+47 e1=3b2 e6=3bc ec=fffd ef=fffd+1 f4=fffd+1 f7=fffd f9=b7
    fa=fffd+2 fe=220e ff=fffd
CEL8ISO8859P14 iso8859_14
CL8ISO8859P5 iso8859_5
CL8ISOIR111 koi8_r
    80=80+32 a1=452+1 a4=454+8 ad=ad ae=45e+1 b0=2116 b1=402+1 b4=404+8 bd=a4 be=40e+1
CL8KOI8R koi8_r 94=220e 95=2022
CL8KOI8U koi8_r a4=454 a6=456+1 ad=491 b4=404 b6=406+1 bd=490
CL8MACCYRILLICS mac_cyrillic
    a0=fffd a2=a2 a5=b7 ad=456 b0=fffd b4=a5 b6=fffd c3=fffd c5=fffd+1 c9=fffd d0=ad d1=2015
    d2=fffd+3 d7=fffd ff=a4
CL8MSWIN1251 cp1251 98=98
D7DEC 7bit 40=a7 5b=c4 5c=d6 5d=dc 7b=e4 7c=f6 7d=fc 7e=df
D7SIEMENS9780X 7bit 40=a7 5b=c4 5c=d6 5d=dc 7b=e4 7c=f6 7d=fc 7e=df
DK7SIEMENS9780X 7bit 5b=c6 5c=d8 5d=c5 5e=dc 7b=e6 7c=f8 7d=e5 7e=fc
E7DEC 7bit 23=a3 40=a7 5b=a1 5c=d1 5d=bf 7b=b0 7c=f1 7d=e7
E7SIEMENS9780X 7bit 5b=a1 5c=d1 5d=bf 7b=b4 7c=f1 7d=e7 7e=a8
EE8ISO8859P2 iso8859_2
EE8MACCES mac_latin2
    a0=fffd a5=b7 ae=fffd b6=3b4 b7=3a3 c3=fffd c6=394 c9=fffd d0=fffd d1=2015 d7=fffd dc=fffd+1
    e2=fffd+1 fe=fffd
EE8MACCROATIANS mac_iceland
    a0=fffd a5=b7 a9=15e ae=17d b0=fffd b6=3b4 b7=3a3 b8=3a0 b9=15f ba=fffd bd=2126 be=17e c3=fffd
    c5=223c c6=106 c8=10c c9=fffd d0=110 d1=2015 d7=fffd+1 d9=a9 da=fffd+3 de=c6 df=bb e0=fffd+5
    e6=107 e7=fffd e8=10d e9=fffd+6 f0=111 f1=fffd+7 f9=3c0 fa=fffd+3 fe=e6 ff=fffd
EE8MSWIN1250 cp1250 81=81 83=83 88=88 90=90 98=98
EE8PC852 cp852
EEC8EUROASCI cp1253
    7f=b0 80=c0+4 85=c6 86=d8 87=c5 88=391 89=386 8a=392+1 8c=c7 8d=394+1 8f=388 90=c8+3 94=396+1
    96=389 97=398+1 99=38a 9a=cc+3 9e=39a+1 a0=e0+4 a5=e6 a6=f8 a7=e5 a8=3b1 a9=3ac aa=3b2+1 ac=e7
    ad=3b4+1 af=3ad b0=e8+3 b4=3b6+1 b6=3ae b7=3b8+1 b9=3af ba=ec+3 be=3ba+1 c0=39c+1 c2=d1
    c3=39e+1 c5=38c c6=d2+4 cb=3a0+1 cd=3a3+2 d0=38e d1=3ab d2=d9+3 da=38f+1 dc=3ca dd=3b0 de=ab
    df=bb e0=3bc+1 e2=f1 e3=3be+1 e5=3cc e6=f2+4 eb=3c0+1 ed=3c3+2 f0=3cd f1=3cb f2=f9+3 fa=3ce
    fb=3c2 fc=df fd=a1 fe=bf
EEC8EUROPA3 cp850
    01=386 02=388+2 05=38c 06=38e 07=b0 0f=a4 14=b6 15=a7 16=a3 17=38f 18=2191 19=2193 1a=2192
    1b=2190 1c=cb 98=391 9c=3b1 9e=3ac 9f=392 a6=3b2 a7=393 a8=3b3 a9=394 aa=3b4 ab=395 ac=3b5
    ad=3ad ae=396 af=3b6 b0=397 b1=3b7 b2=3ae b3=fffd b4=aa b8=398 b9=3b8 ba=fffd+2 bd=399 be=3aa
    bf=fffd+1 c1=ba c2=a1 c3=bf c4=fffd c5=384 c8=fffd+1 ca=3b9 cb=3af cc=3ca cd=fffd ce=390 cf=39a
    d0=3ba d1=39b d3=3bb d4=39c d5=3bc d7=39d d8=3bd d9=fffd+1 db=39e dc=3be dd=39f de=3bf df=3cc
    e3=3a0 e6=3c0 e7=3a1 e8=3c1 ea=3a3 eb=3c2+1 ed=3a4 ee=3c4 ef=3a5 f0=3ab f1=3c5 f2=3cd f3=3cb
    f4=3b0 f5=3a6 f6=3c6 f7=3a7 f8=3c7 f9=3a8 fb=3c8 fc=3a9 fd=3c9 fe=3ce ff=fffd
EL8DEC cp1253
    80=fffd 82=fffd+5 89=fffd 8b=fffd 91=fffd+6 99=fffd 9b=fffd a0=fffd a1=a1+1 a4=fffd a6=fffd
    a8=a4 aa=aa ac=fffd+3 b4=fffd b8=fffd b9=b9+1 bc=bc be=fffd bf=bf c0=3ca d0=fffd d1=3a0+1
    da=3ac+3 de=fffd df=3cc e0=3cb f0=fffd f1=3c0+1 fa=3c2 fb=3cd+1 fd=384 fe=fffd
EL8ISO8859P7 iso8859_7 a5=fffd aa=fffd
EL8MACGREEKS iso8859_7
    80=c4+1 82=c7 83=c9 84=d1 85=d6 86=dc 87=e1 88=e0 89=e2 8a=e4 8b=e3 8c=e5 8d=e7 8e=e9 8f=e8
    90=ea+1 92=ed 93=ec 94=ee+1 96=f1 97=f3 98=f2 99=f4 9a=f6 9b=f5 9c=fa 9d=f9 9e=fb+1 a0=fffd
    a4=ae a5=f7 aa=2122 ad=fffd c0=3ca d2=3a3+12 df=3cb e0=390 fa=fffd+1
EL8MSWIN1253 cp1253 81=81 88=88 8a=8a 8c=8c+4 98=98 9a=9a 9c=9c+3 aa=f8f9 d2=f8fa ff=f8fb
EL8PC437S ascii
    80=391+16 91=3a3+6 98=3b1+16 a9=3c3 aa=3c2 ab=3c4+4 e0=3c9 e1=3ac+2 e4=3ca e5=3af e6=3cc+1
    e8=3cb e9=3ce ea=386 eb=388+2 ee=38c ef=38e+1 f1=b1 f2=2265 f3=2264 f6=f7 f8=b0 fa=b7 fd=b2
    fe=220e
EL8PC737 cp437
    80=391+16 91=3a3+6 98=3b1+16 a9=3c3 aa=3c2 ab=3c4+4 e0=3c9 e1=3ac+2 e4=3ca e5=3af e6=3cc+1
    e8=3cb e9=3ce ea=386 eb=388+2 ee=38c ef=38e+1 f4=3aa+1 f9=2022 fe=220e
EL8PC851 cp869
    80=c7 81=fc 82=e9 83=e2 84=e4 85=e0 87=e7 88=ea+1 8a=e8 8b=ef 8c=ee 8e=c4 91=fffd 93=f4 94=f6
    96=fb 97=f9 99=d6 9a=dc ef=b4 f7=b8 fe=220e
EL8PC869 cp869 ef=b4 fe=220e
ET8MSWIN923 cp1252 80=fffd 8c=fffd 8d=17d 8e=fffd 97=2015 9c=fffd 9d=17e 9e=fffd a0=fffd
HU8ABMOD cp850
    81=bc 82=aa 85=c1 86=c9 87=cd 88=d3 89=d6 8a=150 8b=da 8c=dc 8d=170 90=e5 93=ac 94=ae 96=a1
    99=eb 9a=ee a0=d1 a1=ba a2=bf a3=bd a5=e1 a6=e9 a7=ed a8=f3 a9=f6 aa=151 ab=fa ac=fc ad=171
    b0=fffd+4 b5=e0 b9=fffd+3 bf=fffd+6 c8=fffd+6 d6=e7 d9=fffd+3 df=fffd e0=ea e2=e8 e9=ef ea=ec
    f2=fffd fe=220e
HU8CWI2 ascii
    80=c7 81=fc 82=e9 83=e2 84=e4 85=e0 86=e5 87=e7 88=ea+1 8a=e8 8b=ef 8c=ee 8d=cd 8e=c4 8f=c1
    90=c9 91=e6 92=c6 93=151 94=f6 95=d3 96=171 97=da 98=170 99=d6 9a=dc 9b=a2+1 9d=a5 9e=20a7
    9f=192 a0=e1 a1=ed a2=f3 a3=fa a4=f1 a5=d1 a6=aa a7=150 a8=bf aa=ac ab=bd ac=bc ad=a1 ae=ab
    af=bb e0=3b1+1 e2=393 e3=3c0 e4=3a3 e5=3c3 e6=3bc e7=3c4 e8=3a6 e9=398 ea=3a9 eb=3b4 ed=3c6
    ee=3b5 f1=b1 f2=2265 f3=2264 f6=f7 f8=b0 f9=b7 fd=b2 fe=220e
I7DEC 7bit 23=a3 40=a7 5b=b0 5c=e7 5d=e9 60=f9 7b=e0 7c=f2 7d=e8 7e=ec
I7SIEMENS9780X 7bit 23=a3 40=a7 5b=b0 5c=e7 5d=e9 60=f9 7b=e0 7c=f2 7d=e8 7e=ec
IN8ISCII ascii
    a1=901+2 a4=905+6 ab=90e+2 ae=90d af=912+2 b2=911 b3=915+26 ce=95f cf=930+9 d9=a0 da=93e+5
    e0=946+2 e3=945 e4=94a+2 e7=949 e8=94d e9=93c f1=966+9
IS8MACICELANDICS mac_iceland
    7e=223c a5=fffd b0=fffd b6=3b4 b7=3a3 b8=3a0 ba=fffd bd=2126 c3=fffd c5=fffd c6=394 c9=fffd
    d0=fffd d1=2015 d7=fffd da=fffd db=a4 e2=fffd+2 f0=fffd f6=2038 f7=7e f8=2c9
IS8PC861 cp861
    a9=fffd b0=fffd+47 e6=3bc ec=fffd ef=fffd+1 f4=fffd+1 f7=fffd f9=2d9 fb=fffd+1 fe=220e
IW8ISO8859P8 iso8859_8
IW8MACHEBREWS mac_iceland
    81=fb1f a0=f8e1 a1=f8e0 a2=f8df a3=f8de a4=f8dd a5=f8dc a6=20aa a7=f8db a8=f8da a9=f8d9 aa=f8d8
    ab=f8d7 ac=f8d6 ad=f8d5 ae=f8d4 af=f8d3 b0=f8d2 b1=f8d1 b2=f8d0 b3=f8cf b4=f8ce b5=f8cd b6=f8cc
    b7=f8cb b8=f8ca b9=f8c9 ba=f8c8 bb=f8c7 bc=f8c4+2 bf=f8ba c0=fb3c c1=201e c2=fffd+3 c6=5bc
    c7=fb4b c8=fb35 cb=5b8 cc=5b7 cd=5b5+1 cf=5b4 d1=2015 d6=fb2a+1 d8=f8c2 d9=f8f2 da=5b2 db=5b1
    dc=5bb dd=5b9 de=5b8 df=5b3 e0=5d0+26 fb=f8be fc=f8c3 fd=f8bc fe=f8bc+1
IW8MSWIN1255 cp1255 81=81 8a=8a 8c=8c+4 9a=9a 9c=9c+3 ca=5ba d9=f88d+6 fb=f894+1 ff=f896
IW8PC1507 cp862 e6=3bc fe=220e
LA8ISO6937 ascii
    a0=a0+3 a5=a5 a7=a7 a8=a4 a9=2018 aa=201c ab=ab ac=2190+3 b0=b0+3 b4=d7 b5=b5+2 b8=f7 b9=2019
    ba=201d bb=bb+4 c1=300 c2=b4 c3=2c6 c4=7e c5=2c9 c6=2d8+1 c8=a8 ca=2da cb=b8 cd=2dd ce=2db
    cf=2c7 d0=2015 d1=b9 d2=ae d3=a9 d4=2122 d5=266a d6=a6 dc=215b+3 e0=2126 e1=c6 e2=110 e3=aa
    e4=126 e6=132 e7=13f e8=141 e9=d8 ea=152 eb=ba ec=de ed=166 ee=14a ef=149 f0=138 f1=e6 f2=111
    f3=f0 f4=127 f5=131 f6=133 f7=140 f8=142 f9=f8 fa=153 fb=df fc=fe fd=167 fe=14b ff=ad
LA8PASSPORT cp1252
    80=102+5 86=10a+1 88=110+1 8a=114+5 90=2c7 91=b7 92=154+3 96=11e+4 9b=1f5 9c=126+1 9e=130+1
    a0=136+1 a2=12c+3 a6=14a+1 a8=2dc a9=138 aa=201c ab=f8f9 ac=14e+1 ae=146 af=2c9 b0=2da b1=143
    b2=16c+1 b4=df b5=144 b6=15a+1 b8=2018 b9=145 ba=201f bb=f8f6 bc=15e+1 be=141+1 c2=139 c3=13b
    c5=152 ca=170 ce=166 d1=162 d4=179 d5=17b d7=150 db=172 df=178 e2=13a e3=13c e5=153 ea=171
    ee=167 f1=163 f4=17a f5=17c f7=151 fb=173
LT8MSWIN921 cp1257
    80=fffd 82=fffd 84=fffd+3 89=fffd 8b=fffd 8d=fffd+2 91=fffd+6 99=fffd 9b=fffd 9d=fffd+1 a1=201d
    a5=201e b4=201c ff=2019
LT8PC772 cp866
    b0=fffd+4 b5=104 b6=10c b7=118 b8=116 b9=fffd+3 bd=12e be=160 bf=ac c0=fffd+5 c6=172 c7=16a
    c8=fffd+6 cf=17d d0=105 d1=10d d2=119 d3=117 d4=12f d5=161 d6=173 d7=16b d8=17e d9=fffd+6
    f2=2265 f3=2264 f4=201c+1 f6=f7 f7=fffd f9=2d9 fb=fffd fd=b2 fe=220e ff=fffd
LT8PC774 cp437
    a9=fffd b0=fffd+4 b5=104 b6=10c b7=118 b8=116 b9=fffd+3 bd=12e be=160 bf=fffd+6 c6=172 c7=16a
    c8=fffd+6 cf=17d d0=105 d1=10d d2=119 d3=117 d4=12f d5=161 d6=173 d7=16b d8=17e d9=fffd+6
    e1=3b2 e6=3bc ec=fffd ed=d8 ee=fffd+2 f4=fffd+1 f7=fffd f9=2d9 fb=fffd+1 fe=220e ff=fffd
LV8PC1117 cp775
    8a=117 8b=12f 91=17b+1 96=16b 9b=144 9c=13b 9d=141 9f=10d a3=173 a4=104+1 a6=17d+1 a8=118+1
    aa=116 ab=17a ac=10c ad=12e b5=2561+1 b7=2556 b8=2555 bd=255c be=255b c6=255e+1 cf=2567+1
    d1=2564+1 d3=2559 d4=2558 d5=2552+1 d7=256b d8=256a e6=160+1 ea=16a eb=172 ec=13c ef=146 f2=e6
    f3=c6 f5=a4 f7=f8 f9=d8 fb=157 fc=156 fd=201e fe=201c
LV8PC8LR cp1125
    b5=100 b6=fffd b7=146 bd=14c c6=101 c7=fffd cf=fffd d0=160 d1=fffd d2=10d d3=10c d6=1f5
    d7=12a+1 dd=16b de=16a f0=112+1 f2=122 f3=137 f4=136 f5=13c f6=13b f7=17e f8=17d f9=14d fc=145
    fd=161 fe=220e ff=fffd
LV8RST104090 cp1125
    b5=100 b7=146 bd=14c c6=101 d0=160 d2=10d d3=10c d6=123 d7=12a+1 dd=16b de=16a f0=112+1 f2=122
    f3=137 f4=136 f5=13c f6=13b f7=17e f8=17d f9=14d fc=145 fd=161 fe=220e
N7SIEMENS9780X 7bit 5b=c6 5c=d8 5d=c5 5e=dc 7b=e6 7c=f8 7d=e5 7e=fc
N8PC865 cp865
    a9=fffd b0=fffd+47 e1=3b2 e6=3bc ec=fffd ef=fffd+1 f4=fffd+1 f7=fffd f9=b7 fa=fffd+2 fe=220e
    ff=fffd
NDK7DEC 7bit 40=c4 5b=c6 5c=d8 5d=c5 5e=dc 60=e4 7b=e6 7c=f8 7d=e5 7e=fc
NE8ISO8859P10 iso8859_10 bd=fffd
NEE8ISO8859P4 iso8859_4 af=2c9
RU8BESTA ascii
    ac=42a ae=44a b0=2116 bb=a7 bc=2264 be=2265 c0=42e c1=410+1 c3=426 c4=414+1 c6=424 c7=413
    c8=425 c9=418+7 d1=42f d2=420+3 d6=416 d7=412 d8=42c d9=42b da=417 db=428 dc=42d dd=429 de=427
    e0=44e e1=430+1 e3=446 e4=434+1 e6=444 e7=433 e8=445 e9=438+7 f1=44f f2=440+3 f6=436 f7=432
    f8=44c f9=44b fa=437 fb=448 fc=44d fd=449 fe=447
RU8PC855 cp855 b0=fffd+4 b9=fffd+3 bf=fffd+6 c8=fffd+6 d9=fffd+3 df=fffd fd=fffd fe=220e
RU8PC866 cp866
S7DEC 7bit 40=c9 5b=c4 5c=d6 5d=c5 5e=dc 60=e9 7b=e4 7c=f6 7d=e5 7e=fc
S7SIEMENS9780X 7bit 24=a4 40=c9 5b=c4 5c=d6 5d=c5 5e=dc 60=e9 7b=e4 7c=f6 7d=e5 7e=fc
SE8ISO8859P3 iso8859_3
SF7ASCII 7bit 5b=c4 5c=d6 5d=c5 7b=e4 7c=f6 7d=e5
SF7DEC 7bit 5b=c4 5c=d6 5d=c5 5e=dc 60=e9 7b=e4 7c=f6 7d=e5 7e=fc
TH8MACTHAIS iso8859_11
    80=ab 81=bb 82=fffd+10 8d=201c+1 8f=fffd+13 9d=2018+1 9f=fffd da=fffd dd=ad de=2015 ee=2122
    fa=ae fb=a9
TH8TISASCII iso8859_11 80=20ac 85=2026 91=2018+1 93=201c+1 95=2022 96=2013+1 db=f8c1+3 fc=f8c5+3
TIMESTEN8 latin_1
TR8DEC cp1254
    80=fffd 82=fffd+10 91=fffd+11 9f=fffd+1 a4=fffd a6=fffd a8=a4 ac=fffd+1 ae=130 af=fffd b4=fffd
    b8=fffd be=131 d7=152 dd=178 f7=153 fd=ff ff=fffd
TR8MACTURKISHS mac_turkish b6=3b4 b7=3a3 b8=3a0 bd=2126 d1=2015 f0=fffd f5=fffd f8=2c9
TR8MSWIN1254 cp1254 81=81 8d=8d+3 9d=9d+1
TR8PC857 cp857
US7ASCII 7bit
US8PC437 cp437 e1=3b2 e6=3bc fe=220e
VN8MSWIN1258 cp1258 81=81 8a=8a 8d=8d+3 9a=9a 9d=9d+1
VN8VN3 ascii
    a1=102 a2=c2 a3=ca a4=d4 a5=1a0 a6=1af a7=110 a8=103 a9=e2 aa=ea ab=f4 ac=1a1 ad=1b0 ae=111
    b5=e0 b6=1ea3 b7=e3 b8=e1 b9=1ea1 bb=1eb1 bc=1eb3 bd=1eb5 be=1eaf c6=1eb7 c7=1ea7 c8=1ea9
    c9=1eab ca=1ea5 cb=1ead cc=e8 ce=1ebb cf=1ebd d0=e9 d1=1eb9 d2=1ec1 d3=1ec3 d4=1ec5 d5=1ebf
    d6=1ec7 d7=ec d8=1ec9 dc=129 dd=ed de=1ecb df=f2 e1=1ecf e2=f5 e3=f3 e4=1ecd e5=1ed3 e6=1ed5
    e7=1ed7 e8=1ed1 e9=1ed9 ea=1edd eb=1edf ec=1ee1 ed=1edb ee=1ee3 ef=f9 f1=1ee7 f2=169 f3=fa
    f4=1ee5 f5=1eeb f6=1eed f7=1eef f8=1ee9 f9=1ef1 fa=1ef3 fb=1ef7 fc=1ef9 fd=fd fe=1ef5
WE8DEC cp1254
    80=fffd 82=fffd+10 91=fffd+11 9f=fffd+1 a4=fffd a6=fffd a8=a4 ac=fffd+3 b4=fffd b8=fffd be=fffd
    d0=fffd d7=152 dd=178 de=fffd f0=fffd f7=153 fd=ff fe=fffd+1
WE8DG ascii
    bb=a7 bf=2191 c0=c1 c1=c0 c2=c2 c3=c4 c4=c3 c5=c5+2 c8=c9 c9=c8 ca=ca+1 cc=cd cd=cc ce=ce+1
    d0=d1 d1=d3 d2=d2 d3=d4 d4=d6 d5=d5 d6=d8 d7=152 d8=da d9=d9 da=db+1 e0=e1 e1=e0 e2=e2 e3=e4
    e4=e3 e5=e5+2 e8=e9 e9=e8 ea=ea+1 ec=ed ed=ec ee=ee+1 f0=f1 f1=f3 f2=f2 f3=f4 f4=f6 f5=f5 f6=f8
    f7=153 f8=fa f9=f9 fa=fb+1 fc=df
WE8HP hp_roman8
    5e=2038 60=2018 7e=223c 80=fffd+32 a9=60 aa=5e ac=7e b1=fffd+1 e3=110+1 f2=fffd+3 f6=2015
    fc=220e
WE8ISO8859P1 latin_1
WE8ISO8859P15 iso8859_15
WE8ISO8859P9 iso8859_9
WE8MACROMAN8S mac_roman
WE8MSWIN1252 cp1252 81=81 8d=8d 8f=8f+1 9d=9d
WE8NCR4970 cp1254
    80=fffd 82=fffd+10 91=fffd+11 9f=fffd+1 a4=fffd a6=fffd a8=a4 ac=fffd+3 b4=fffd b8=fffd be=fffd
    d0=fffd d7=152 dd=178 de=fffd f0=fffd f7=153 fd=ff fe=fffd+1
WE8NEXTSTEP cp1255
    80=2007 81=c0+5 87=c7+15 97=d9+5 9d=b5 9e=d7 9f=f7 a0=a9 a4=2044 a6=192 a8=a4 a9=2019 aa=201c
    ac=2039+1 ae=fb01+1 b0=ae b1=2013 b2=2020+1 b4=b7 b5=a6 b7=2022 b8=201a b9=201e ba=201d bc=2026
    bd=2030 be=ac c0=b9 c1=60 c2=b4 c3=2c6 c4=7e c5=2c9 c6=2d8+1 c8=a8 c9=b2 ca=2da cb=b8 cc=b3
    cd=2dd ce=2db cf=2c7 d0=2015 d1=b1 d2=bc+2 d5=e0+5 db=e7+5 e1=c6 e2=ed e3=aa e4=ee+3 e8=141
    e9=d8 ea=152 eb=ba ec=f2+4 f1=e6 f2=f9+2 f5=131 f6=fc+1 f8=142 f9=f8 fa=153 fb=df fc=fe+1
    fe=fffd
WE8PC850 cp850
WE8PC858 cp858
WE8PC860 cp860 b0=fffd+47 ec=fffd ef=fffd+1 f4=fffd+1 f7=fffd f9=2d9 fb=fffd+1 fe=220e
WE8ROMAN8 hp_roman8 80=fffd+32 a9=2018 aa=2038 ac=223c f5=fffd f6=2015 fc=220e
"""


def parse_tables(source: str = SINGLE_BYTE_SOURCE) -> dict[str, tuple[str, dict[int, int]]]:
    """Parse :data:`SINGLE_BYTE_SOURCE` into ``{name: (base codec, {byte: code point})}``."""
    records: dict[str, tuple[str, dict[int, int]]] = {}
    overrides: dict[int, int] = {}
    for line in source.splitlines():
        if not line.strip():
            continue
        fields = line.split()
        if not line[0].isspace():
            overrides = {}
            records[fields[0]] = (fields[1], overrides)
            fields = fields[2:]
        for item in fields:
            byte_text, _, target = item.partition("=")
            code_text, _, run_text = target.partition("+")
            byte, code = int(byte_text, 16), int(code_text, 16)
            for step in range(int(run_text or 0) + 1):
                overrides[byte + step] = code if code == 0xFFFD else code + step
    return records
